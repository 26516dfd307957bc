/* SPDX-License-Identifier: Apache-2.0 */
/* ros2_sub.c — build/tests/ros2-sub: a DDS subscriber for tests/test_ros2.sh, in another
 * process than the app. It subscribes to one topic and saves each sample's serialized bytes
 * (the CDR payload with its 4-byte encapsulation header, as a ROS 2 node receives it) to
 * OUT/NNNNNN.cdr, so that an independent ROS 2 deserialiser (rosbags) decodes them; it prints
 * the topic and type names of the publication it matched, as discovery gave them.
 *
 *   ros2-sub DOMAIN TOPIC TYPE QOS COUNT OUT TIMEOUT_S
 *     QOS: best (best effort), reliable, latched (reliable, transient local: a late joiner
 *     gets the last sample), stuck (reliable, keep all, one sample of room, never read: a
 *     subscriber that stops reading, for TIMEOUT_S seconds)
 *   exit 0: COUNT samples saved (stuck: the time ran out); 1: fewer within TIMEOUT_S; 2: usage
 */
#include <dds/dds.h>
#include <dds/ddsi/ddsi_serdata.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ros2_msgs.h"

static const dds_topic_descriptor_t *const types[] = {
    &sensor_msgs_msg_dds__Image__desc, &sensor_msgs_msg_dds__CameraInfo__desc,
    &sensor_msgs_msg_dds__PointCloud2__desc, &stereo_msgs_msg_dds__DisparityImage__desc,
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The topic and type names of the first publication matched, as discovery reports them. */
static void print_match(dds_entity_t reader)
{
    dds_instance_handle_t ih[4];
    dds_return_t n = dds_get_matched_publications(reader, ih, 4);
    for (dds_return_t i = 0; i < n && i < 1; i++) {
        dds_builtintopic_endpoint_t *e = dds_get_matched_publication_data(reader, ih[i]);
        if (e) {
            printf("matched topic %s type %s\n", e->topic_name, e->type_name);
            dds_builtintopic_free_endpoint(e);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 8) {
        fprintf(stderr, "usage: ros2-sub DOMAIN TOPIC TYPE best|reliable|latched|stuck COUNT "
                        "OUT TIMEOUT_S\n");
        return 2;
    }
    const char *topic_name = argv[2], *type = argv[3], *qos = argv[4], *out = argv[6];
    int count = atoi(argv[5]);
    double timeout = atof(argv[7]);
    const dds_topic_descriptor_t *desc = NULL;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(types[i]->m_typename, type) == 0)
            desc = types[i];
    if (!desc) {
        fprintf(stderr, "ros2-sub: no type %s\n", type);
        return 2;
    }
    dds_entity_t pp = dds_create_participant((dds_domainid_t)atoi(argv[1]), NULL, NULL);
    if (pp < 0) {
        fprintf(stderr, "ros2-sub: participant: %s\n", dds_strretcode(pp));
        return 2;
    }
    dds_entity_t topic = dds_create_topic(pp, desc, topic_name, NULL, NULL);
    dds_qos_t *q = dds_create_qos();
    int stuck = strcmp(qos, "stuck") == 0;
    if (strcmp(qos, "best") == 0) {
        dds_qset_reliability(q, DDS_RELIABILITY_BEST_EFFORT, 0);
        dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 1);
    } else if (stuck) {
        dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
        dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
        dds_qset_resource_limits(q, 1, DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED);
    } else {
        dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
        dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 4);
        if (strcmp(qos, "latched") == 0)
            dds_qset_durability(q, DDS_DURABILITY_TRANSIENT_LOCAL);
    }
    dds_entity_t reader = topic < 0 ? topic : dds_create_reader(pp, topic, q, NULL);
    dds_delete_qos(q);
    if (reader < 0) {
        fprintf(stderr, "ros2-sub: reader of %s: %s\n", topic_name, dds_strretcode(reader));
        return 2;
    }
    double t0 = now_s();
    int saved = 0, printed = 0;
    while (now_s() - t0 < timeout && (stuck || saved < count)) {
        if (!printed) {
            dds_instance_handle_t ih;
            if (dds_get_matched_publications(reader, &ih, 1) > 0) {
                print_match(reader);
                fflush(stdout);
                printed = 1;
            }
        }
        struct ddsi_serdata *sd = NULL;
        dds_sample_info_t si;
        if (stuck || dds_takecdr(reader, &sd, 1, &si, DDS_ANY_STATE) <= 0) {
            dds_sleepfor(DDS_MSECS(5));
            continue;
        }
        if (si.valid_data) {
            uint32_t size = ddsi_serdata_size(sd);
            char *buf = malloc(size), path[1024];
            ddsi_serdata_to_ser(sd, 0, size, buf);
            snprintf(path, sizeof path, "%s/%06d.cdr", out, saved);
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(buf, 1, size, f) != size || fclose(f) != 0) {
                fprintf(stderr, "ros2-sub: cannot write %s\n", path);
                return 2;
            }
            free(buf);
            saved++;
        }
        ddsi_serdata_unref(sd);
    }
    printf("saved %d\n", saved);
    dds_delete(pp);
    return stuck || saved >= count ? 0 : 1;
}
