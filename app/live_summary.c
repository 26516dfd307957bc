/* SPDX-License-Identifier: Apache-2.0 */
/* live_summary.c — stereo-live's figures (live_summary.h): the rates over the last second and
 * the status line made of them, the headless loop that prints it, and the summary printed at
 * the end (throughput, stage time and end-to-end latency: median, p95) with its --stats-json
 * file. Built twice, as the app is: LIVE_LIBC_ONLY=1 leaves the outputs out.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "live_summary.h"
#include "outpath.h"
#include "stereo.h"
#include "version.h"

/* ---- statistics over the last second ------------------------------------------------------- */

void rates_update(rates *r, const live_stats *s, int64_t now)
{
    double dt = (double)(now - r->t_ns) * 1e-9;
    if (dt <= 0)
        return;
    uint64_t dp = s->processed - r->last.processed;
    r->captured = s->captured - r->last.captured;
    r->dropped = s->dropped - r->last.dropped;
    r->capture_fps = (double)(s->captured - r->last.captured) / dt;
    r->stage_fps = (double)dp / dt;
    if (dp)
        r->stage_ms = (s->stage_ms_total - r->last.stage_ms_total) / (double)dp;
    if (r->latency_n)
        r->latency_ms = r->latency_sum_ms / r->latency_n;
    r->latency_sum_ms = 0;
    r->latency_n = 0;
    r->last = *s;
    r->t_ns = now;
}

void rates_latency(rates *r, int64_t capture_ns, int64_t now)
{
    double ms = (double)(now - capture_ns) * 1e-6;
    r->latency_sum_ms += ms;
    r->latency_n++;
    live_histogram_add(&r->latency, ms);
    r->shown++;
}

/* "3 views 1,-1 sides" for a stage of more views, "" for the pair. */
static const char *views_name(const app *a, char *buf, size_t len)
{
    const stereo_params *p = &a->params;
    if (len)
        buf[0] = '\0';
    if (p->views <= 2)
        return buf;
    size_t used = (size_t)snprintf(buf, len, "%d views 1", p->views);
    for (int i = 2; i < p->views && used < len; i++) {
        char b[16];
        used += (size_t)snprintf(buf + used, len - used, ",%s",
                                 stereo_baseline_str(p->baseline[i], b, sizeof b));
    }
    if (used < len)
        snprintf(buf + used, len - used, " %s", stereo_combine_to_str(p->combine));
    return buf;
}

/* The views' state for the overlay and the log, two lines (0 for the pair: nothing to say):
 * what matched the frame shown ("3 views 1,-1 sides", or the fallback while a view is lost,
 * or waiting while the reference or view 1 is), and each camera's skew to the reference and
 * drops, as the source reported them. Returns 1 when a view is lost (shown in yellow). */
int views_lines(const app *a, const live_stats *s, char *l1, char *l2, size_t len)
{
    if (a->params.views <= 2)
        return 0;
    char name[96];
    views_name(a, name, sizeof name);
    int lost = 0;
    if (s->views_used == 0 && s->view_waits) { /* the latest delivery could not be matched */
        unsigned l = s->lost_views & 3u;
        snprintf(l1, len, "%s: view %d lost, waiting for it (the last depth stays)", name,
                 l & 2u ? 1 : 0);
        lost = 1;
    } else if (a->views_used && a->views_used < a->params.views) {
        int v = 2;
        while (v < a->params.views && !(a->shown_lost & 1u << v))
            v++;
        snprintf(l1, len, "%s: view %d lost, depth from the reference and view 1", name, v);
        lost = 1;
    } else
        snprintf(l1, len, "%s", name);
    size_t used = (size_t)snprintf(l2, len, "skew ms");
    for (int i = 1; i < a->params.views && used < len; i++)
        used += (size_t)snprintf(l2 + used, len - used, "%s v%d %+.1f", i > 1 ? "," : "", i,
                                 (double)a->view_skew_ns[i] * 1e-6);
    if (used < len)
        used += (size_t)snprintf(l2 + used, len - used, "   drops");
    for (int i = 1; i < a->params.views && used < len; i++)
        used += (size_t)snprintf(l2 + used, len - used, "%s v%d %llu", i > 1 ? "," : "", i,
                                 (unsigned long long)a->view_drops[i]);
    return 1 + lost;
}

/* ", recorded N, record drops M" while recording, else "". */
static void record_counts(const live_stats *s, char *buf, size_t len)
{
    if (s->recording)
        snprintf(buf, len, ", recorded %llu, record drops %llu", (unsigned long long)s->recorded,
                 (unsigned long long)s->record_drops);
    else if (len)
        buf[0] = 0;
}

/* Cost mi: "MI: warm, 3 restarts" (the latest frame, and the hierarchy runs so far), else "". */
void mi_counts(const live_stats *s, char *buf, size_t len)
{
    if (s->mi)
        snprintf(buf, len, "MI: %s, %llu restart%s", s->mi_warm_last ? "warm" : "restart",
                 (unsigned long long)s->mi_restarts, s->mi_restarts == 1 ? "" : "s");
    else if (len)
        buf[0] = 0;
}

/* Said once a run, when the stage has not kept up with the source for two periods in a row
 * (more than 10 % of the captured frames dropped, a stage time above the source's frame
 * interval): the stage's time against the interval, the share dropped, and the settings that
 * make the stage faster. */
void keep_up_check(app *a)
{
    rates *r = &a->rt;
    const double interval = r->capture_fps > 0 ? 1000.0 / r->capture_fps : 0;
    const int slow = r->captured >= 5 && r->dropped * 10 > r->captured && interval > 0 &&
                     r->stage_ms > interval;
    r->slow_periods = slow ? r->slow_periods + 1 : 0;
    if (r->told || r->slow_periods < 2)
        return;
    r->told = 1;
    const stereo_params *p = &a->params;
    char help[160] = "";
    size_t n = 0;
    if (p->num_disparities >= 32)
        n += (size_t)snprintf(help + n, sizeof help - n, "%s-d %d", n ? ", " : "",
                              p->num_disparities / 32 * 16);
    if (p->paths == 8 && n < sizeof help)
        n += (size_t)snprintf(help + n, sizeof help - n, "%s--paths 4", n ? ", " : "");
    if (p->cost != STEREO_COST_RANK && n < sizeof help)
        n += (size_t)snprintf(help + n, sizeof help - n, "%s--cost rank", n ? ", " : "");
    report("the stage does not keep up with the source: %.1f ms a frame against %.1f ms between "
           "frames (%.1f fps), %.0f %% of the captured frames dropped%s%s%s",
           r->stage_ms, interval, r->capture_fps, 100.0 * (double)r->dropped / (double)r->captured,
           n ? "; faster settings: " : "", help,
           strcmp(live_pipeline_backend(a->pipe), "cpu") == 0 ? " (or a CUDA GPU)" : "");
}

static void status_line(app *a, const live_stats *s, char *buf, size_t len)
{
    char rec[96], mi[64], v1[OVERLAY_LINE], v2[OVERLAY_LINE], views[2 * OVERLAY_LINE + 8] = "";
    record_counts(s, rec, sizeof rec);
    mi_counts(s, mi, sizeof mi);
    if (views_lines(a, s, v1, v2, sizeof v1))
        snprintf(views, sizeof views, " | %s | %s", v1, v2);
    snprintf(buf, len, "frame %llu | capture %.1f fps | stage %.1f fps %.1f ms | latency %.0f ms"
             " | dropped %llu%s | %s | %dx%d D%d%s%s%s%s%s%s%s",
             (unsigned long long)s->processed, a->rt.capture_fps, a->rt.stage_fps, a->rt.stage_ms,
             a->rt.latency_ms, (unsigned long long)s->dropped, rec, live_pipeline_backend(a->pipe),
             a->params.width, a->params.height, a->params.num_disparities, views,
             mi[0] ? " | " : "", mi, s->source_stats[0] ? " | " : "", s->source_stats,
             s->message[0] ? " | " : "", s->message);
#if !LIVE_LIBC_ONLY
    size_t used = strlen(buf); /* " | out URI N sent M drops; ..." */
    if (used < len)
        live_outputs_status(a->outputs, buf + used, len - used);
#endif
}

/* ---- headless ---------------------------------------------------------------------------- */

void run_headless(app *a)
{
    int64_t next_print = monotonic_ns() + 1000000000LL;
    live_stats s;
    char line[1024];
    while (!got_signal) {
        live_pipeline_wait(a->pipe, 100);
        live_frame f;
        if (live_pipeline_acquire(a->pipe, &f)) {
            take_frame(a, &f, 0);
            live_pipeline_release(a->pipe);
            rates_latency(&a->rt, f.capture_ns, monotonic_ns());
        }
        int64_t now = monotonic_ns();
        if (now >= next_print) {
            live_pipeline_stats(a->pipe, &s);
            rates_update(&a->rt, &s, now);
            keep_up_check(a);
            status_line(a, &s, line, sizeof line);
            printf("%s\n", line);
            fflush(stdout);
            next_print += 1000000000LL;
        }
        if (live_pipeline_finished(a->pipe))
            break;
    }
}

/* ---- the summary at the end ------------------------------------------------------------------ */

void summary_get(app *a, int64_t t_start, int64_t t_end, summary *m)
{
    live_pipeline_stats(a->pipe, &m->s);
    live_pipeline_stage_times(a->pipe, &m->stage);
    m->wall_s = (double)(t_end - t_start) * 1e-9;
    const live_stats *s = &m->s;
    if (s->processed >= 2 && s->last_done_ns > s->first_done_ns)
        m->fps = (double)(s->processed - 1) / ((double)(s->last_done_ns - s->first_done_ns) * 1e-9);
    else
        m->fps = m->wall_s > 0 ? (double)s->processed / m->wall_s : 0;
}

#if !LIVE_LIBC_ONLY
/* An output that failed every frame it was given did nothing the run was asked for: the run
 * failed (exit 1), though the output was only reported once while it ran. One that sent some
 * frames (a disk filled up, then freed) kept the run going, as designed. */
static int output_failed(const live_output_stats *o) { return o->sent == 0 && o->failures > 0; }

/* One line for each output that failed every frame; the count of them. */
int report_failed_outputs(const app *a)
{
    int failed = 0;
    for (int i = 0; i < live_outputs_count(a->outputs); i++) {
        live_output_stats o;
        live_outputs_stats(a->outputs, i, &o);
        if (output_failed(&o)) {
            report("output %s: sent no frame: all %llu writes failed (the first: %s)", o.uri,
                   (unsigned long long)o.failures, o.error);
            failed++;
        }
    }
    return failed;
}
#endif

void summary_print(const app *a, const summary *m)
{
    const live_histogram *st = &m->stage, *lat = &a->rt.latency;
    char rec[96];
    record_counts(&m->s, rec, sizeof rec);
    printf("stereo-live: %.1f fps (%llu frames, %.3f s wall), stage ms median %.3f p95 %.3f, "
           "latency ms median %.3f p95 %.3f max %.3f (%llu shown), %llu dropped%s\n",
           m->fps, (unsigned long long)m->s.processed, m->wall_s,
           live_histogram_quantile(st, 0.5), live_histogram_quantile(st, 0.95),
           live_histogram_quantile(lat, 0.5), live_histogram_quantile(lat, 0.95), lat->max,
           (unsigned long long)a->rt.shown, (unsigned long long)m->s.dropped, rec);
    const live_stats *s = &m->s;
#if !LIVE_LIBC_ONLY
    for (int i = 0; i < live_outputs_count(a->outputs); i++) {
        live_output_stats o;
        live_outputs_stats(a->outputs, i, &o);
        printf("stereo-live: output %s: %llu sent, %llu drops (%llu failed)%s%s\n", o.uri,
               (unsigned long long)o.sent, (unsigned long long)o.drops,
               (unsigned long long)o.failures, o.extra,
               output_failed(&o) ? "; FAILED: no frame sent, every write failed (exit 1)" : "");
    }
#endif
    if (a->params.views > 2) { /* more views: how many frames each stage matched, per camera */
        char name[96];
        printf("stereo-live: %s: %llu frames from every view, %llu from the reference and view 1 "
               "(a view lost), %llu waited (the reference or view 1 lost); drops",
               views_name(a, name, sizeof name),
               (unsigned long long)(s->processed - s->pair_frames),
               (unsigned long long)s->pair_frames, (unsigned long long)s->view_waits);
        for (int i = 1; i < a->params.views; i++)
            printf("%s v%d %llu", i > 1 ? "," : "", i, (unsigned long long)a->view_drops[i]);
        printf(", skew ms");
        for (int i = 1; i < a->params.views; i++)
            printf("%s v%d %+.1f", i > 1 ? "," : "", i, (double)a->view_skew_ns[i] * 1e-6);
        printf(" (the last frame shown)\n");
    }
    if (s->mi) /* the two MI paths' costs (stereo.h: mi_warm, mi_restart) */
        printf("stereo-live: mi: %llu restarts (hierarchy) at %.1f ms mean, of which the "
               "hierarchy %.1f ms; %llu warm frames at %.1f ms mean\n",
               (unsigned long long)s->mi_restarts,
               s->mi_restarts ? s->mi_restart_ms_total / s->mi_restarts : 0.0,
               s->mi_restarts ? s->mi_hierarchy_ms_total / s->mi_restarts : 0.0,
               (unsigned long long)s->mi_warm_frames,
               s->mi_warm_frames ? s->mi_warm_ms_total / s->mi_warm_frames : 0.0);
}

/* A JSON string (quotes, backslashes and control characters escaped). */
static void json_string(FILE *f, const char *v)
{
    fputc('"', f);
    for (; *v; v++) {
        unsigned char c = (unsigned char)*v;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

typedef struct {
    const app *a;
    const summary *m;
} summary_json;

/* The --stats-json text (a file_writer for atomic_write_file). */
static int write_summary_json(FILE *f, const char *path, const void *ctx, char *err,
                              size_t errlen)
{
    const app *a = ((const summary_json *)ctx)->a;
    const summary *m = ((const summary_json *)ctx)->m;
    const live_histogram *st = &m->stage, *lat = &a->rt.latency;
    const stereo_params *p = &a->params;
    fprintf(f, "{\n  \"program\": \"%s\",\n  \"version\": ", PROGRAM);
    json_string(f, version_number());
    fprintf(f, ",\n  \"commit\": ");
    json_string(f, version_commit());
    fprintf(f, ",\n  \"backends\": ");
    json_string(f, version_backends());
    fprintf(f, ",\n  \"source\": \"%s\",\n  \"backend\": \"%s\",\n  \"sms\": %d,\n",
            frame_source_kind(a->src), live_pipeline_backend(a->pipe),
            live_pipeline_sms(a->pipe));
    fprintf(f, "  \"width\": %d,\n  \"height\": %d,\n  \"disparities\": %d,\n  \"paths\": %d,\n"
               "  \"cost\": \"%s\",\n  \"synth_prerender\": %d,\n",
            p->width, p->height, p->num_disparities, p->paths, stereo_cost_to_str(p->cost),
            a->opt.prerender);
    fprintf(f, "  \"frames\": %llu,\n  \"captured\": %llu,\n  \"dropped\": %llu,\n"
               "  \"shown\": %llu,\n  \"wall_s\": %.6f,\n  \"fps\": %.3f,\n",
            (unsigned long long)m->s.processed, (unsigned long long)m->s.captured,
            (unsigned long long)m->s.dropped, (unsigned long long)a->rt.shown, m->wall_s, m->fps);
    fprintf(f, "  \"stage_ms\": {\"mean\": %.4f, \"median\": %.4f, \"p95\": %.4f, \"max\": %.4f},\n",
            live_histogram_mean(st), live_histogram_quantile(st, 0.5),
            live_histogram_quantile(st, 0.95), st->max);
    fprintf(f, "  \"latency_ms\": {\"mean\": %.4f, \"median\": %.4f, \"p95\": %.4f, "
               "\"max\": %.4f},\n",
            live_histogram_mean(lat), live_histogram_quantile(lat, 0.5),
            live_histogram_quantile(lat, 0.95), lat->max);
    if (m->s.mi) {
        const live_stats *s = &m->s;
        fprintf(f, "  \"mi\": {\"warm\": %d, \"restart_threshold_percent\": %d, "
                   "\"restarts\": %llu, \"restart_ms_mean\": %.4f, "
                   "\"hierarchy_ms_mean\": %.4f, \"warm_frames\": %llu, "
                   "\"warm_ms_mean\": %.4f},\n",
                p->mi_warm, p->mi_restart, (unsigned long long)s->mi_restarts,
                s->mi_restarts ? s->mi_restart_ms_total / s->mi_restarts : 0.0,
                s->mi_restarts ? s->mi_hierarchy_ms_total / s->mi_restarts : 0.0,
                (unsigned long long)s->mi_warm_frames,
                s->mi_warm_frames ? s->mi_warm_ms_total / s->mi_warm_frames : 0.0);
    }
    {
        const live_stats *s = &m->s;
        int n = p->views > 2 ? p->views : 2;
        fprintf(f, "  \"views\": %d,\n  \"baselines\": [1", n);
        for (int i = 2; i < n; i++)
            fprintf(f, ", %.6g", p->baseline[i] / (double)STEREO_BASELINE_SCALE);
        fprintf(f, "],\n  \"combine\": \"%s\",\n  \"view_frames_all\": %llu,\n"
                   "  \"view_frames_pair\": %llu,\n  \"view_waits\": %llu,\n  \"view_drops\": [",
                stereo_combine_to_str(p->combine),
                (unsigned long long)(s->processed - s->pair_frames),
                (unsigned long long)s->pair_frames, (unsigned long long)s->view_waits);
        for (int i = 0; i < n; i++)
            fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)a->view_drops[i]);
        fprintf(f, "],\n  \"view_skew_ms\": [");
        for (int i = 0; i < n; i++)
            fprintf(f, "%s%.3f", i ? ", " : "", (double)a->view_skew_ns[i] * 1e-6);
        fprintf(f, "],\n");
    }
#if !LIVE_LIBC_ONLY
    fprintf(f, "  \"outputs\": [");
    for (int i = 0; i < live_outputs_count(a->outputs); i++) {
        live_output_stats o;
        live_outputs_stats(a->outputs, i, &o);
        fprintf(f, "%s\n    {\"uri\": ", i ? "," : "");
        json_string(f, o.uri);
        fprintf(f, ", \"sent\": %llu, \"drops\": %llu, \"failures\": %llu, \"restarts\": %llu, "
                "\"error\": ", (unsigned long long)o.sent, (unsigned long long)o.drops,
                (unsigned long long)o.failures, (unsigned long long)o.restarts);
        json_string(f, o.error);
        fprintf(f, "}");
    }
    fprintf(f, "%s],\n", live_outputs_count(a->outputs) ? "\n  " : "");
#endif
    fprintf(f, "  \"recorded\": %llu,\n  \"record_drops\": %llu,\n  \"error\": ",
            (unsigned long long)m->s.recorded, (unsigned long long)m->s.record_drops);
    json_string(f, m->s.error);
    fprintf(f, "\n}\n");
    return 0;
}

/* --stats-json, written beside and renamed into place: 0, or -1 after printing the reason. */
int summary_write_json(const app *a, const summary *m, const char *path)
{
    char err[CONFIG_PATH_MAX + 256];
    summary_json ctx = {a, m};
    if (atomic_write_file(path, write_summary_json, &ctx, err, sizeof err) != 0) {
        report("--stats-json %s", err);
        return -1;
    }
    return 0;
}
