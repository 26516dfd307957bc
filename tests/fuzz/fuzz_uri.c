/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_uri.c — libFuzzer harness of the live input URIs (hal/source_uri.h): the input, split at
 * its first two newlines into up to three strings, is parsed as one URI each (source_uri_parse:
 * schemes, file:// percent-decoding and patterns, synth:// options) and as a plan
 * (source_plan_make: input, left, right). What parses must hold its promises: the text and the
 * target are NUL-terminated within SOURCE_URI_MAX, a file:// target is a pattern exactly when
 * it has one conversion, synth:// sizes are in the scene's range. Each string is also parsed
 * as an output URI (hal/output_uri.h: output_uri_parse), whose promises are checked too: a
 * file:// output is a pattern with one conversion, a ROS 2 domain and a port in range, the
 * strings terminated. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "output_uri.h"
#include "sequence.h"
#include "source_uri.h"
#include "synth.h"

static void check(const source_uri *u)
{
    if (!memchr(u->text, 0, sizeof u->text) || !memchr(u->target, 0, sizeof u->target))
        abort();
    if (u->kind == URI_FILE && u->is_pattern && seq_check_pattern("uri", u->target, NULL, 0))
        abort();
    if (u->kind == URI_SYNTH && ((u->width >= 0 && (u->width < SYNTH_MIN_SIZE ||
                                                     u->width > SYNTH_MAX_SIZE)) ||
                                 (u->height >= 0 && (u->height < SYNTH_MIN_SIZE ||
                                                      u->height > SYNTH_MAX_SIZE)) ||
                                 u->fps > 1000))
        abort();
}

static void check_output(const output_uri *u)
{
    if (!memchr(u->text, 0, sizeof u->text) || !memchr(u->target, 0, sizeof u->target) ||
        !memchr(u->frame_id, 0, sizeof u->frame_id))
        abort();
    if (u->kind == OUT_FILE && seq_check_pattern("uri", u->target, NULL, 0))
        abort();
    if (u->domain < 0 || u->domain > OUTPUT_DOMAIN_MAX ||
        ((u->kind == OUT_RTP || u->kind == OUT_RTSP) && (u->port < 1 || u->port > 65535)))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        abort();
    memcpy(text, data, size);
    text[size] = '\0';
    char *part[3] = {text, NULL, NULL};
    for (int i = 1; i < 3 && part[i - 1]; i++) {
        char *nl = strchr(part[i - 1], '\n');
        if (nl) {
            *nl = '\0';
            part[i] = nl + 1;
        }
    }
    char err[1024];
    source_uri u;
    output_uri o;
    for (int i = 0; i < 3; i++) {
        if (part[i] && source_uri_parse(part[i], &u, err, sizeof err) == 0)
            check(&u);
        if (part[i] && output_uri_parse(part[i], &o, err, sizeof err) == 0)
            check_output(&o);
    }
    source_plan plan;
    if (source_plan_make(part[0], part[1], part[2], &plan, err, sizeof err) == 0)
        for (int i = 0; i < plan.nuri; i++)
            check(&plan.uri[i]);
    free(text);
    return 0;
}
