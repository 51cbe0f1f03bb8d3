/* html.c: writes OUT/report.html from the material report.c gathered
 * (model.h). The page is complete as HTML tables: the overview per
 * method (EX with its full denominator, a stacked status bar in SVG), the
 * task x method grid, the time section (the run's seconds per step, a
 * histogram, the slowest tasks with their steps stacked, the workers), then one <article
 * id="task=ID"> per task. The inline script only adds behaviour: filters and sorting on
 * the grid, and showing the one task the URL fragment #task=ID names. Every string that
 * comes from a run (IDs, names, SQL, details, CSV fields, paths) goes through
 * sx_report_escape; the script reads data- attributes and element text only, never builds
 * markup from them. */
#include "common/report/html.h"

#include "common/files.h"
#include "common/mem.h"
#include "common/status.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Characters of a detail shown in a grid cell's tooltip. */
#define TOOLTIP_MAX 200
/* Fields of a CSV preview are cut at this many bytes. */
#define FIELD_MAX 80
/* The slowest tasks listed in the time section. */
#define SLOWEST 15
#define HISTOGRAM_BINS 20

static const char *const s_colours[SX_STATUS_COUNT] = {
    "#2e9d4f", "#d64545", "#9aa0a6", "#e8871e", "#8e44ad",
    "#e0c020", "#8d6e63", "#00838f", "#455a9c", "#c2185b",
};

/* One colour per execution step, in sx_step_name order. */
static const char *const s_step_colours[SX_STEP_COUNT] = {
    "#7cb342", "#29b6f6", "#ab47bc", "#455a9c", "#ffa726", "#26a69a", "#bdbdbd",
};

/* Writes at most max bytes of text, escaped, cut on a character boundary. */
static void escape_cut(FILE *out, const char *text, size_t max)
{
    size_t n = strlen(text ? text : "");
    if (n <= max) {
        sx_report_escape(out, text);
        return;
    }
    while (max > 0 && ((unsigned char)text[max] & 0xC0) == 0x80)
        max--;
    char *cut = sx_strndup(text, max);
    sx_report_escape(out, cut);
    fputs("\xE2\x80\xA6", out); /* ... */
    free(cut);
}

void sx_report_escape(FILE *out, const char *text)
{
    for (const unsigned char *p = (const unsigned char *)(text ? text : ""); *p; p++) {
        switch (*p) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&#39;", out);
            break;
        default:
            if (*p < 0x20 && *p != '\n' && *p != '\t')
                fputs("&#xfffd;", out);
            else
                fputc(*p, out);
        }
    }
}

static const char *json_text(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static long long tally(const sx_report_method_t *m, const char *key)
{
    return json_integer_value(json_object_get(m->tally, key));
}

static long long status_count(const sx_report_method_t *m, sx_status_t status)
{
    return json_integer_value(
        json_object_get(json_object_get(m->tally, "by_status"), sx_status_name(status)));
}

/* The grid's short word for a status. */
static const char *short_name(sx_status_t status)
{
    static const char *const words[SX_STATUS_COUNT] = {
        "match",   "mismatch",    "missing", "rejected", "flink",
        "timeout", "materialize", "input",   "infra",    "eval",
    };
    return (unsigned)status < SX_STATUS_COUNT ? words[status] : "?";
}

static void write_style(FILE *out)
{
    fputs(
        "<style>\n"
        "body{font:14px/1.4 system-ui,sans-serif;margin:0 1.5em 3em;color:#222}\n"
        "h1{font-size:1.5em;margin:.6em 0 .1em}h2{margin-top:1.6em;border-bottom:1px "
        "solid #ddd}\n"
        "table{border-collapse:collapse;margin:.4em 0}td,th{border:1px solid "
        "#ddd;padding:2px 6px;text-align:left;vertical-align:top}\n"
        "th{background:#f4f4f4}.num{text-align:right;font-variant-numeric:tabular-nums}"
        "\n"
        "pre{background:#f7f7f7;padding:.5em;white-space:pre-wrap;word-break:break-word;"
        "margin:.3em 0}\n"
        ".ex{font-weight:600;font-size:1.1em;white-space:nowrap}.muted{color:#777}"
        ".nowrap{white-space:nowrap}\n"
        ".cell{color:#fff;text-align:center;font-size:12px}.cell a{color:#fff;"
        "text-decoration:none;display:block}\n"
        "th.unmatched{background:#f8d0d0}nav a{margin-right:1em}\n"
        ".legend span{display:inline-block;margin-right:1em}.legend i{display:inline-"
        "block;width:.9em;height:.9em;margin-right:.3em;vertical-align:-1px}\n"
        ".js-only{display:none}html.js .js-only{display:block}\n"
        "html.js article.task{display:none}html.js article.task.open{display:block;"
        "position:fixed;top:1em;bottom:1em;left:2em;right:2em;overflow:auto;z-index:9;"
        "background:#fff;border:2px solid #455a9c;padding:0 1.2em 1em;"
        "box-shadow:0 0 0 100vmax rgba(0,0,0,.35)}\n"
        "article.task{margin-bottom:1.5em}.method{margin:.8em 0 0 .5em}\n"
        "#grid-table th[data-sort]{cursor:pointer}.side{display:flex;gap:1.5em;"
        "flex-wrap:wrap}\n",
        out);
    for (int s = 0; s < SX_STATUS_COUNT; s++)
        fprintf(out, ".s-%s{background:%s}\n", sx_status_name((sx_status_t)s),
                s_colours[s]);
    fputs("</style>\n", out);
}

static void row(FILE *out, const char *label, const char *value)
{
    fprintf(out, "<tr><th>%s</th><td>", label);
    if (value)
        sx_report_escape(out, value);
    else
        fputs("<span class=\"muted\">not recorded</span>", out);
    fputs("</td></tr>\n", out);
}

/* Results of method m: every (task, sample). */
static size_t units_of(const sx_report_t *r, size_t m)
{
    return r->task_count * r->methods[m].samples;
}

static size_t units_of_all(const sx_report_t *r)
{
    size_t n = 0;
    for (size_t m = 0; m < r->method_count; m++)
        n += units_of(r, m);
    return n;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The distinct worker names of the results, sorted ("" for tasks that no
 * worker executed); the caller frees the array, not the names. */
static size_t workers_of(const sx_report_t *r, const char ***names_p)
{
    size_t count = 0;
    const char **names = sx_alloc(units_of_all(r) + 1, sizeof *names);
    for (size_t m = 0; m < r->method_count; m++)
        for (size_t i = 0; i < units_of(r, m); i++)
            names[count++] = r->methods[m].results[i].worker;
    qsort(names, count, sizeof *names, by_name);
    size_t kept = 0;
    for (size_t i = 0; i < count; i++)
        if (kept == 0 || strcmp(names[kept - 1], names[i]) != 0)
            names[kept++] = names[i];
    *names_p = names;
    return kept;
}

/* The workers that executed tasks, as "w0, w1 (2)". */
static char *worker_list(const sx_report_t *r)
{
    char *text = NULL;
    size_t size = 0, count = 0;
    const char **names;
    size_t n = workers_of(r, &names);
    FILE *list = open_memstream(&text, &size);
    for (size_t i = 0; i < n; i++)
        if (names[i][0])
            fprintf(list, "%s%s", count++ ? ", " : "", names[i]);
    fprintf(list, count ? " (%zu)" : "none (scored only)", count);
    fclose(list);
    free(names);
    return text;
}

static const char *runtime_text(json_t *value)
{
    const char *text = json_string_value(value);
    return text ? text : "unknown";
}

/* One row per distinct runtime of run.workers: "RUNTIME (w0, w1)". */
static void write_runtimes(FILE *out, json_t *workers)
{
    json_t *written = json_object();
    const char *name, *other;
    json_t *value, *v;
    json_object_foreach(workers, name, value)
    {
        const char *runtime = runtime_text(value);
        if (json_object_get(written, runtime))
            continue;
        json_object_set_new(written, runtime, json_true());
        fputs("<tr><th>runtime</th><td>", out);
        sx_report_escape(out, runtime);
        const char *separator = " (";
        json_object_foreach(workers, other, v)
        {
            if (strcmp(runtime_text(v), runtime) == 0) {
                fputs(separator, out);
                sx_report_escape(out, other);
                separator = ", ";
            }
        }
        fputs(")</td></tr>\n", out);
    }
    json_decref(written);
}

static void write_run(FILE *out, const sx_report_t *r)
{
    json_t *run = r->run;
    char tasks[32], wall[32];
    snprintf(tasks, sizeof tasks, "%zu", r->task_count);
    json_t *w = json_object_get(run, "wall_seconds");
    snprintf(wall, sizeof wall, "%.3f s", json_number_value(w));
    char *workers = worker_list(r);
    fputs("<table class=\"run\">\n", out);
    row(out, "command", json_text(run, "command"));
    row(out, "bench", json_text(run, "bench"));
    row(out, "bench fingerprint (SHA-1)", json_text(run, "bench_fingerprint"));
    row(out, "tasks", tasks);
    row(out, "profile", json_text(run, "profile"));
    row(out, "engine", json_text(run, "engine"));
    row(out, "streamex", json_text(run, "streamex"));
    row(out, "workers", workers);
    write_runtimes(out, json_object_get(run, "workers"));
    row(out, "started (UTC)", json_text(run, "started"));
    row(out, "ended (UTC)", json_text(run, "ended"));
    row(out, "wall time", json_is_number(w) ? wall : NULL);
    json_t *bootstrap = json_object_get(run, "bootstrap");
    if (bootstrap) {
        char text[96];
        snprintf(text, sizeof text, "%lld resamples of the task IDs, seed %lld",
                 json_integer_value(json_object_get(bootstrap, "resamples")),
                 json_integer_value(json_object_get(bootstrap, "seed")));
        row(out, "95% intervals", text);
    }
    fputs("</table>\n", out);
    free(workers);
}

/* The status counts of a method as one stacked SVG bar. */
static void write_bar(FILE *out, const sx_report_method_t *m, size_t total)
{
    const double width = 300;
    double x = 0;
    fprintf(out,
            "<svg width=\"%.0f\" height=\"16\" role=\"img\" aria-label=\"statuses\">",
            width);
    for (int s = 0; s < SX_STATUS_COUNT && total; s++) {
        long long n = status_count(m, (sx_status_t)s);
        if (n <= 0)
            continue;
        double w = width * (double)n / (double)total;
        fprintf(out,
                "<rect x=\"%.2f\" y=\"0\" width=\"%.2f\" height=\"16\" fill=\"%s\">"
                "<title>%s: %lld</title></rect>",
                x, w, s_colours[s], sx_status_name((sx_status_t)s), n);
        x += w;
    }
    fputs("</svg>", out);
}

/* The input file summary.json names for a method (predictions or submission). */
static const char *input_file(const sx_report_t *r, const char *method)
{
    json_t *inputs = json_object_get(r->run, "inputs");
    return json_text(json_object_get(inputs, "files"), method);
}

/* A cell of a 95 % interval, "[low, high]"; empty when there is none. */
static void write_interval(FILE *out, json_t *ci)
{
    fputs("<td class=\"nowrap\">", out);
    if (json_array_size(ci) == 2)
        fprintf(out, "[%.4f, %.4f]", json_number_value(json_array_get(ci, 0)),
                json_number_value(json_array_get(ci, 1)));
    fputs("</td>", out);
}

/* Changelog figures in words: "insert 3 · update_before 0 · ... · rows 2". */
static void write_changelog_text(FILE *out, const sx_changelog_counts_t *c)
{
    for (int k = 0; k < SX_CHANGE_KINDS; k++)
        fprintf(out, "%s%s %llu", k ? " &middot; " : "",
                sx_change_kind_name((sx_change_kind_t)k),
                (unsigned long long)c->records[k]);
    fprintf(out, " &middot; rows %llu", (unsigned long long)c->rows);
}

/* A method's changelog figures summed over the tasks that have them. */
static void write_changelog_totals(FILE *out, const sx_report_t *r,
                                   const sx_report_method_t *method)
{
    sx_changelog_counts_t sum = {.known = true};
    size_t tasks = 0;
    for (size_t i = 0; i < r->task_count; i++) {
        const sx_changelog_counts_t *c = &method->results[i].changelog;
        if (!c->known)
            continue;
        tasks++;
        for (int k = 0; k < SX_CHANGE_KINDS; k++)
            sum.records[k] += c->records[k];
        sum.rows += c->rows;
    }
    if (tasks == 0) {
        fputs("<span class=\"muted\">none</span>", out);
        return;
    }
    write_changelog_text(out, &sum);
    fprintf(out,
            "<br><span class=\"muted\">over %zu task(s) with a folded changelog</span>",
            tasks);
}

static void write_methods(FILE *out, const sx_report_t *r)
{
    const char *kind = json_text(json_object_get(r->run, "inputs"), "kind");
    /* The intervals' columns only when summary.json has intervals. */
    bool intervals = false;
    for (size_t m = 0; m < r->method_count; m++)
        intervals = intervals || json_object_get(r->methods[m].tally, "ex_ci");
    const char *ci_head = intervals ? "<th>95% CI</th>" : "";
    fprintf(out,
            "<table class=\"methods\">\n<tr><th>method</th><th>EX</th>%s<th>strict "
            "EX</th>%s<th>statuses</th><th>changelog</th><th>%s</th></tr>\n",
            ci_head, ci_head, kind ? kind : "input");
    for (size_t m = 0; m < r->method_count; m++) {
        const sx_report_method_t *method = &r->methods[m];
        /* correct counts every (task, sample): EX is the mean over samples */
        long long total = tally(method, "total") * (long long)method->samples;
        fputs("<tr><th>", out);
        sx_report_escape(out, method->name);
        fprintf(out, "</th><td class=\"ex\" data-method=\"%zu\">%lld/%lld = %.4f</td>", m,
                tally(method, "correct"), total,
                json_number_value(json_object_get(method->tally, "ex")));
        if (intervals)
            write_interval(out, json_object_get(method->tally, "ex_ci"));
        fprintf(out, "<td class=\"nowrap\">%lld/%lld = %.4f</td>",
                tally(method, "strict_correct"), total,
                json_number_value(json_object_get(method->tally, "ex_strict")));
        if (intervals)
            write_interval(out, json_object_get(method->tally, "ex_strict_ci"));
        fputs("<td>", out);
        write_bar(out, method, (size_t)(total > 0 ? total : 0));
        fputs("<br>", out);
        for (int s = 0, shown = 0; s < SX_STATUS_COUNT; s++)
            if (status_count(method, (sx_status_t)s) > 0)
                fprintf(out, "%s<span class=\"nowrap\">%s %lld</span>",
                        shown++ ? ", " : "", sx_status_name((sx_status_t)s),
                        status_count(method, (sx_status_t)s));
        fputs("</td><td>", out);
        write_changelog_totals(out, r, method);
        fputs("</td><td>", out);
        const char *file = input_file(r, method->name);
        if (file)
            sx_report_escape(out, file);
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n<p class=\"legend\">", out);
    for (int s = 0; s < SX_STATUS_COUNT; s++)
        fprintf(out, "<span><i class=\"s-%s\"></i>%s</span>",
                sx_status_name((sx_status_t)s), sx_status_name((sx_status_t)s));
    fputs("</p>\n", out);
}

/* summary.json's comparisons of every pair of methods, when there are. */
static void write_comparisons(FILE *out, const sx_report_t *r)
{
    json_t *all = json_object_get(r->summary, "comparisons");
    if (!json_array_size(all))
        return;
    fputs("<table class=\"comparisons\">\n<tr><th>A</th><th>B</th><th>of</th>"
          "<th>both right</th><th>only A</th><th>only B</th><th>neither</th>"
          "<th>EX(A) - EX(B)</th><th>95% CI</th><th>McNemar p</th></tr>\n",
          out);
    size_t i;
    json_t *c;
    json_array_foreach(all, i, c)
    {
        fputs("<tr><td>", out);
        sx_report_escape(out, json_text(c, "a"));
        fputs("</td><td>", out);
        sx_report_escape(out, json_text(c, "b"));
        fprintf(out,
                "</td><td>%s</td><td class=\"num\">%lld</td><td class=\"num\">%lld</td>"
                "<td class=\"num\">%lld</td><td class=\"num\">%lld</td>"
                "<td class=\"num\">%+.4f</td>",
                json_is_true(json_object_get(c, "strict")) ? "strict EX" : "EX",
                json_integer_value(json_object_get(c, "both")),
                json_integer_value(json_object_get(c, "only_a")),
                json_integer_value(json_object_get(c, "only_b")),
                json_integer_value(json_object_get(c, "neither")),
                json_number_value(json_object_get(c, "ex_diff")));
        write_interval(out, json_object_get(c, "ex_diff_ci"));
        fprintf(out, "<td class=\"num\">%.4g</td></tr>\n",
                json_number_value(json_object_get(c, "mcnemar_p")));
    }
    fputs("</table>\n", out);
}

/* Whether some method matched a task and another did not. */
static bool disagree(const sx_report_t *r, size_t task)
{
    for (size_t m = 1; m < r->method_count; m++)
        if (sx_report_result(&r->methods[m], task, 0)->score !=
            sx_report_result(&r->methods[0], task, 0)->score)
            return true;
    return false;
}

static void write_grid_filters(FILE *out)
{
    fputs("<div class=\"js-only\"><label>status <select id=\"f-status\"><option "
          "value=\"\">any</option>",
          out);
    for (int s = 0; s < SX_STATUS_COUNT; s++)
        fprintf(out, "<option>%s</option>", sx_status_name((sx_status_t)s));
    fputs("</select></label> <label><input type=\"checkbox\" id=\"f-disagree\"> methods "
          "disagree (some match, some not)</label> <span id=\"f-count\"></span></div>\n",
          out);
}

static void write_grid(FILE *out, const sx_report_t *r)
{
    write_grid_filters(out);
    fputs("<table id=\"grid-table\">\n<thead><tr><th data-sort=\"id\">task</th>", out);
    for (size_t m = 0; m < r->method_count; m++) {
        fprintf(out, "<th data-sort=\"m%zu\">", m);
        sx_report_escape(out, r->methods[m].name);
        fputs("</th>", out);
    }
    fputs("<th data-sort=\"secs\" class=\"num\">seconds</th></tr></thead>\n<tbody>\n",
          out);
    for (size_t i = 0; i < r->task_count; i++) {
        double seconds = 0;
        fputs("<tr data-statuses=\"", out);
        for (size_t m = 0; m < r->method_count; m++) {
            seconds += sx_report_result(&r->methods[m], i, 0)->seconds;
            fprintf(out, "%s%s", m ? " " : "",
                    sx_status_name(sx_report_result(&r->methods[m], i, 0)->status));
        }
        fprintf(out, "\" data-disagree=\"%d\" data-secs=\"%.3f\"><td><a href=\"#task=",
                disagree(r, i), seconds);
        sx_report_escape(out, r->task_ids[i]);
        fputs("\">", out);
        sx_report_escape(out, r->task_ids[i]);
        fputs("</a></td>", out);
        for (size_t m = 0; m < r->method_count; m++) {
            const sx_report_method_t *method = &r->methods[m];
            const sx_result_t *res = sx_report_result(method, i, 0);
            fprintf(out, "<td class=\"cell s-%s\" data-rank=\"%d\" title=\"",
                    sx_status_name(res->status), (int)res->status);
            escape_cut(out, res->detail, TOOLTIP_MAX);
            fputs("\"><a href=\"#task=", out);
            sx_report_escape(out, res->task_id);
            fprintf(out, "\">%s", short_name(res->status));
            /* Several samples: the cell is sample 0's, and says how many matched. */
            if (method->samples > 1) {
                size_t matched = 0;
                for (size_t k = 0; k < method->samples; k++)
                    matched += sx_report_result(method, i, k)->score == 1;
                fprintf(out, " %zu/%zu", matched, method->samples);
            }
            fputs("</a></td>", out);
        }
        fprintf(out, "<td class=\"num\">%.3f</td></tr>\n", seconds);
    }
    fputs("</tbody></table>\n", out);
}

/* A histogram of every (method, task) time as an SVG of HISTOGRAM_BINS bars. */
static void write_histogram(FILE *out, const sx_report_t *r)
{
    double max = 0;
    size_t bins[HISTOGRAM_BINS] = {0}, peak = 0;
    for (size_t m = 0; m < r->method_count; m++)
        for (size_t i = 0; i < units_of(r, m); i++)
            max = fmax(max, r->methods[m].results[i].seconds);
    double step = max > 0 ? max / HISTOGRAM_BINS : 1;
    for (size_t m = 0; m < r->method_count; m++)
        for (size_t i = 0; i < units_of(r, m); i++) {
            size_t b = (size_t)(r->methods[m].results[i].seconds / step);
            bins[b < HISTOGRAM_BINS ? b : HISTOGRAM_BINS - 1]++;
        }
    for (size_t b = 0; b < HISTOGRAM_BINS; b++)
        peak = bins[b] > peak ? bins[b] : peak;
    const int bar = 28, height = 120;
    fprintf(out,
            "<h3>Task times</h3><svg width=\"%d\" height=\"%d\" role=\"img\" "
            "aria-label=\"histogram of task times\">",
            bar * HISTOGRAM_BINS + 40, height + 34);
    for (size_t b = 0; b < HISTOGRAM_BINS; b++) {
        double h = peak ? (double)height * (double)bins[b] / (double)peak : 0;
        fprintf(
            out,
            "<rect x=\"%zu\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"#455a9c\">"
            "<title>%.3f-%.3f s: %zu</title></rect>",
            b * bar + 2, height - h, bar - 2, h, b * step, (b + 1) * step, bins[b]);
    }
    fprintf(out,
            "<text x=\"0\" y=\"%d\" font-size=\"11\">0 s</text><text x=\"%d\" y=\"%d\" "
            "font-size=\"11\" text-anchor=\"end\">%.3f s</text><text x=\"0\" y=\"%d\" "
            "font-size=\"11\">most in one bar: %zu</text></svg>\n",
            height + 14, bar * HISTOGRAM_BINS, height + 14, max, height + 30, peak);
}

static double steps_total(const sx_timings_t *t)
{
    double sum = 0;
    for (int i = 0; i < SX_STEP_COUNT; i++)
        sum += sx_step_seconds(t, i);
    return sum;
}

/* A task's steps as one stacked SVG bar, `width` pixels for `scale`
 * seconds; a tooltip names each step. */
static void write_steps_bar(FILE *out, const sx_timings_t *t, double scale, double width)
{
    fprintf(out, "<svg width=\"%.0f\" height=\"12\" role=\"img\" aria-label=\"steps\">",
            width);
    double x = 0;
    for (int i = 0; i < SX_STEP_COUNT && scale > 0; i++) {
        double w = width * sx_step_seconds(t, i) / scale;
        if (w <= 0)
            continue;
        fprintf(out,
                "<rect x=\"%.2f\" y=\"0\" width=\"%.2f\" height=\"12\" fill=\"%s\">"
                "<title>%s: %.3f s</title></rect>",
                x, w, s_step_colours[i], sx_step_name(i), sx_step_seconds(t, i));
        x += w;
    }
    fputs("</svg>", out);
}

static void write_steps_legend(FILE *out)
{
    fputs("<p class=\"legend\">", out);
    for (int i = 0; i < SX_STEP_COUNT; i++)
        fprintf(out, "<span><i style=\"background:%s\"></i>%s</span>", s_step_colours[i],
                sx_step_name(i));
    fputs("</p>\n", out);
}

/* Where the executed tasks' time went, step by step, over the whole run. */
static void write_step_totals(FILE *out, const sx_report_t *r)
{
    sx_timings_t sum = {0};
    size_t executed = 0;
    for (size_t m = 0; m < r->method_count; m++)
        for (size_t i = 0; i < units_of(r, m); i++) {
            const sx_timings_t *t = &r->methods[m].results[i].steps;
            executed += steps_total(t) > 0;
            for (int k = 0; k < SX_STEP_COUNT; k++)
                *sx_step_slot(&sum, k) += sx_step_seconds(t, k);
        }
    fputs("<h3>Steps</h3>\n", out);
    double total = steps_total(&sum);
    if (total <= 0) {
        fputs("<p class=\"muted\">no step times: no task was executed by a worker "
              "here</p>\n",
              out);
        return;
    }
    write_steps_legend(out);
    write_steps_bar(out, &sum, total, 600);
    fprintf(out,
            "<table><tr><th>step</th><th class=\"num\">seconds</th>"
            "<th class=\"num\">share</th><th class=\"num\">mean per task</th></tr>\n");
    for (int k = 0; k < SX_STEP_COUNT; k++)
        fprintf(out,
                "<tr><td>%s</td><td class=\"num\">%.3f</td><td class=\"num\">%.1f%%</td>"
                "<td class=\"num\">%.3f</td></tr>\n",
                sx_step_name(k), sx_step_seconds(&sum, k),
                100 * sx_step_seconds(&sum, k) / total,
                sx_step_seconds(&sum, k) / (double)executed);
    fprintf(out,
            "<tr><th>all steps</th><th class=\"num\">%.3f</th><th></th>"
            "<th class=\"num\">%.3f</th></tr></table>\n<p class=\"muted\">over %zu "
            "executed task(s)</p>\n",
            total, total / (double)executed, executed);
}

typedef struct {
    const sx_result_t *result;
    const char *method;
    bool sampled; /* its method has several samples: the sample is named */
} timed_t;

static int slower_first(const void *a, const void *b)
{
    double x = ((const timed_t *)a)->result->seconds;
    double y = ((const timed_t *)b)->result->seconds;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void write_slowest(FILE *out, const sx_report_t *r)
{
    size_t n = units_of_all(r), k = 0;
    timed_t *all = sx_alloc(n + 1, sizeof *all);
    for (size_t m = 0; m < r->method_count; m++)
        for (size_t i = 0; i < units_of(r, m); i++)
            all[k++] = (timed_t){&r->methods[m].results[i], r->methods[m].name,
                                 r->methods[m].samples > 1};
    qsort(all, n, sizeof *all, slower_first);
    double scale = n ? all[0].result->seconds : 0;
    fputs("<h3>Slowest tasks</h3><table><tr><th>task</th><th>method</th><th>status</th>"
          "<th class=\"num\">seconds</th><th>attempts</th><th>worker</th>"
          "<th>steps</th></tr>\n",
          out);
    for (size_t i = 0; i < n && i < SLOWEST; i++) {
        fputs("<tr><td><a href=\"#task=", out);
        sx_report_escape(out, all[i].result->task_id);
        fputs("\">", out);
        sx_report_escape(out, all[i].result->task_id);
        fputs("</a></td><td>", out);
        sx_report_escape(out, all[i].method);
        if (all[i].sampled)
            fprintf(out, " sample %d", all[i].result->sample);
        fprintf(
            out,
            "</td><td>%s</td><td class=\"num\">%.3f</td><td class=\"num\">%d</td><td>",
            sx_status_name(all[i].result->status), all[i].result->seconds,
            all[i].result->attempts);
        sx_report_escape(out, all[i].result->worker);
        fputs("</td><td>", out);
        write_steps_bar(out, &all[i].result->steps, scale, 240);
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
    free(all);
}

/* Per worker: tasks and seconds spent, and that as a share of the wall time. */
static void write_workers(FILE *out, const sx_report_t *r)
{
    double wall = json_number_value(json_object_get(r->run, "wall_seconds"));
    fputs("<h3>Workers</h3><table><tr><th>worker</th><th class=\"num\">tasks</th>"
          "<th class=\"num\">seconds</th><th class=\"num\">busy</th></tr>\n",
          out);
    const char **names;
    size_t count = workers_of(r, &names);
    for (size_t w = 0; w < count; w++) {
        size_t tasks = 0;
        double seconds = 0;
        for (size_t m = 0; m < r->method_count; m++)
            for (size_t i = 0; i < units_of(r, m); i++)
                if (strcmp(r->methods[m].results[i].worker, names[w]) == 0) {
                    tasks++;
                    seconds += r->methods[m].results[i].seconds;
                }
        fputs("<tr><td>", out);
        if (names[w][0])
            sx_report_escape(out, names[w]);
        else
            fputs("<span class=\"muted\">none (not executed)</span>", out);
        fprintf(out, "</td><td class=\"num\">%zu</td><td class=\"num\">%.3f</td>", tasks,
                seconds);
        if (wall > 0 && names[w][0])
            fprintf(out, "<td class=\"num\">%.1f%%</td></tr>\n", 100 * seconds / wall);
        else
            fputs("<td></td></tr>\n", out);
    }
    fputs("</table>\n", out);
    free(names);
}

/* Whether the detail says gold column `col` found no equal column. */
static bool column_unmatched(const char *detail, size_t col)
{
    char phrase[64];
    snprintf(phrase, sizeof phrase, "gold column %zu has no equal column", col);
    return strstr(detail, phrase) != NULL;
}

/* A CSV preview as a table under its caption. `detail` (gold only, may be
 * NULL): the verdict's detail, whose unmatched gold columns are marked. */
static void write_preview(FILE *out, const char *caption, const sx_report_preview_t *p,
                          const char *detail)
{
    fprintf(out, "<div><p>%s</p>", caption);
    if (!p->table) {
        fputs("<p class=\"muted\">", out);
        sx_report_escape(out, p->error);
        fputs("</p></div>\n", out);
        return;
    }
    fputs("<table class=\"csv\">\n", out);
    for (size_t i = 0; i < p->table->count; i++) {
        const sx_csv_record_t *rec = &p->table->records[i];
        fputs("<tr>", out);
        for (size_t f = 0; f < rec->count; f++) {
            bool unmatched = i == 0 && detail && column_unmatched(detail, f);
            fputs(i > 0       ? "<td>"
                  : unmatched ? "<th class=\"unmatched\" title=\"no equal column in the "
                                "prediction\">"
                              : "<th>",
                  out);
            escape_cut(out, rec->fields[f], FIELD_MAX);
            fputs(i == 0 ? "</th>" : "</td>", out);
        }
        fputs("</tr>\n", out);
    }
    fputs("</table>\n", out);
    if (p->more)
        fprintf(out, "<p class=\"muted\">first %d rows shown</p>\n",
                SX_REPORT_PREVIEW_ROWS);
    fputs("</div>\n", out);
}

/* A diff's cell: a string as it is, null as a muted NULL, else its JSON. */
static void write_diff_cell(FILE *out, json_t *value)
{
    if (json_is_null(value)) {
        fputs("<span class=\"muted\">NULL</span>", out);
        return;
    }
    if (json_is_string(value)) {
        escape_cut(out, json_string_value(value), FIELD_MAX);
        return;
    }
    char *text = json_dumps(value, JSON_ENCODE_ANY);
    escape_cut(out, text, FIELD_MAX);
    free(text);
}

/* One side of a diff as a table with gold's column names. */
static void write_diff_rows(FILE *out, const char *caption, json_t *side, json_t *columns)
{
    size_t count = (size_t)json_integer_value(json_object_get(side, "count"));
    json_t *rows = json_object_get(side, "rows");
    fprintf(out, "<div><p>%s: %zu</p>", caption, count);
    if (json_array_size(rows) == 0) {
        fputs("</div>\n", out);
        return;
    }
    fputs("<table class=\"csv\"><tr>", out);
    size_t i, j;
    json_t *row, *value;
    json_array_foreach(columns, i, value)
    {
        fputs("<th>", out);
        escape_cut(out, json_string_value(json_object_get(value, "gold")), FIELD_MAX);
        fputs("</th>", out);
    }
    fputs("</tr>\n", out);
    json_array_foreach(rows, i, row)
    {
        fputs("<tr>", out);
        json_array_foreach(row, j, value)
        {
            fputs("<td>", out);
            write_diff_cell(out, value);
            fputs("</td>", out);
        }
        fputs("</tr>\n", out);
    }
    fputs("</table>\n", out);
    if (json_array_size(rows) < count)
        fprintf(out, "<p class=\"muted\">first %zu rows shown</p>\n",
                json_array_size(rows));
    fputs("</div>\n", out);
}

/* The facts of a diff besides its rows: how columns were paired, the first
 * difference, the tie rule, its note. */
static void write_diff_facts(FILE *out, json_t *diff)
{
    fputs("<p class=\"muted\">columns: ", out);
    size_t i;
    json_t *column;
    json_array_foreach(json_object_get(diff, "columns"), i, column)
    {
        fputs(i ? ", gold " : "gold ", out);
        write_diff_cell(out, json_object_get(column, "gold"));
        fputs(" = prediction ", out);
        write_diff_cell(out, json_object_get(column, "prediction"));
        fputs(" (", out);
        write_diff_cell(out, json_object_get(column, "by"));
        fputs(")", out);
    }
    json_t *first = json_object_get(diff, "first_difference");
    if (json_is_object(first)) {
        fprintf(out, "; first difference at position %lld: gold ",
                json_integer_value(json_object_get(first, "position")));
        write_diff_cell(out, json_object_get(first, "gold"));
        fputs(", prediction ", out);
        write_diff_cell(out, json_object_get(first, "prediction"));
    }
    json_t *more = json_object_get(json_object_get(diff, "missing"), "from_tie_set");
    if (json_integer_value(more) > 0)
        fprintf(out, "; %lld more rows wanted from the tie set",
                json_integer_value(more));
    const char *rule = json_string_value(json_object_get(diff, "rule"));
    if (rule) {
        fputs("; rule broken: ", out);
        sx_report_escape(out, rule);
    }
    const char *note = json_string_value(json_object_get(diff, "note"));
    if (note) {
        fputs("; ", out);
        sx_report_escape(out, note);
    }
    if (!json_is_true(json_object_get(diff, "exact")))
        fputs("; the pairing stopped at its bound: the counts are upper bounds", out);
    fputs("</p>\n", out);
}

/* One method's verdict of a task: the facts, the candidate SQL, and its
 * final CSV beside gold (NULL without a bench), with a miss's diff. */
/* A task's step times in words ("prepare 0.120 · replay 0.051 ..."). */
static void write_steps_text(FILE *out, const sx_timings_t *t)
{
    if (steps_total(t) <= 0) {
        fputs("-", out);
        return;
    }
    for (int i = 0; i < SX_STEP_COUNT; i++)
        fprintf(out, "%s%s %.3f", i ? " &middot; " : "", sx_step_name(i),
                sx_step_seconds(t, i));
}

static void write_method_of_task(FILE *out, const sx_report_t *r, size_t m, size_t task,
                                 size_t sample, const sx_report_preview_t *gold)
{
    const sx_report_method_t *method = &r->methods[m];
    const sx_result_t *res = sx_report_result(method, task, sample);
    fputs("<div class=\"method\"><h4>", out);
    sx_report_escape(out, method->name);
    if (method->samples > 1)
        fprintf(out, ", sample %zu", sample);
    fprintf(out, ": <span class=\"cell s-%s\">&nbsp;%s&nbsp;</span></h4>\n<table>",
            sx_status_name(res->status), sx_status_name(res->status));
    fputs("<tr><th>detail</th><td>", out);
    sx_report_escape(out, res->detail[0] ? res->detail : "-");
    fprintf(out,
            "</td></tr><tr><th>EX / strict</th><td>%d / %d</td></tr>"
            "<tr><th>attempts</th><td>%d</td></tr><tr><th>seconds</th><td>%.3f</td></tr>"
            "<tr><th>worker</th><td>",
            res->score, res->strict, res->attempts, res->seconds);
    sx_report_escape(out, res->worker[0] ? res->worker : "-");
    fputs("</td></tr><tr><th>steps (s)</th><td>", out);
    write_steps_text(out, &res->steps);
    fputs("</td></tr><tr><th>changelog</th><td>", out);
    if (res->changelog.known)
        write_changelog_text(out, &res->changelog);
    else
        fputs("-", out);
    fputs("</td></tr></table>\n", out);
    const char *sql =
        method->sql ? sx_predictions_sample_sql(method->sql, res->task_id, (int)sample)
                    : NULL;
    if (sql) {
        fputs("<pre class=\"sql\">", out);
        sx_report_escape(out, sql);
        fputs("</pre>\n", out);
    } else {
        fprintf(out, "<p class=\"muted\">%s</p>\n",
                method->sql ? "no candidate SQL for this task"
                            : "candidate SQL not available from this output");
    }
    sx_report_preview_t preview;
    sx_report_preview_read(NULL, res->csv, &preview);
    json_t *diff = sx_report_diff(r, method->name, res->task_id);
    fputs("<div class=\"side\">", out);
    write_preview(out, "final CSV", &preview, NULL);
    if (gold)
        write_preview(out, "gold", gold, res->detail);
    if (diff) {
        json_t *columns = json_object_get(diff, "columns");
        write_diff_rows(out, "gold rows the final CSV lacks",
                        json_object_get(diff, "missing"), columns);
        write_diff_rows(out, "rows gold lacks", json_object_get(diff, "extra"), columns);
    }
    fputs("</div>\n", out);
    if (diff)
        write_diff_facts(out, diff);
    fputs("</div>\n", out);
    json_decref(diff);
    sx_report_preview_clear(&preview);
}

static void write_task(FILE *out, const sx_report_t *r, size_t task)
{
    const char *id = r->task_ids[task];
    fputs("<article class=\"task\" id=\"task=", out);
    sx_report_escape(out, id);
    fputs("\"><h3>", out);
    sx_report_escape(out, id);
    fputs(" <a style=\"font-size:.8em\" href=\"#grid\">close (Esc)</a></h3>\n", out);
    char *question = sx_report_question(r, id);
    char *policy = sx_report_policy(r, id);
    if (question) {
        fputs("<p class=\"question\">", out);
        sx_report_escape(out, question);
        fputs("</p>\n", out);
    }
    if (policy) {
        fputs("<p>answer policy: ", out);
        sx_report_escape(out, policy);
        fputs("</p>\n", out);
    }
    free(question);
    free(policy);
    char *gold_path = sx_report_gold_path(r, id);
    char *gold_folder = gold_path ? sx_file_folder(gold_path) : NULL;
    sx_report_preview_t gold;
    if (gold_path)
        sx_report_preview_read(gold_folder, gold_path, &gold);
    for (size_t m = 0; m < r->method_count; m++)
        for (size_t k = 0; k < r->methods[m].samples; k++)
            write_method_of_task(out, r, m, task, k, gold_path ? &gold : NULL);
    if (gold_path)
        sx_report_preview_clear(&gold);
    free(gold_folder);
    free(gold_path);
    fputs("</article>\n", out);
}

/* Filters and sorting for the grid; the task named by #task=ID opened.
 * document.body.dataset.ready is set last, for tests to see it ran whole. */
static const char s_script[] =
    "<script>\n"
    "(function(){\n"
    "var body=document.querySelector('#grid-table tbody');\n"
    "var rows=Array.prototype.slice.call(body.rows);\n"
    "var "
    "fs=document.getElementById('f-status'),fd=document.getElementById('f-disagree');\n"
    "var fc=document.getElementById('f-count');\n"
    "function filter(){var s=fs.value,d=fd.checked,n=0;rows.forEach(function(r){\n"
    " var show=(!s||r.getAttribute('data-statuses').split(' ').indexOf(s)>=0)&&\n"
    "  (!d||r.getAttribute('data-disagree')==='1');r.hidden=!show;if(show)n++;});\n"
    " fc.textContent=n+' of '+rows.length+' tasks';}\n"
    "fs.addEventListener('change',filter);fd.addEventListener('change',filter);\n"
    "var last=null,dir=1;\n"
    "function key(r,k){if(k==='id')return r.cells[0].textContent;\n"
    " if(k==='secs')return parseFloat(r.getAttribute('data-secs'));\n"
    " return "
    "parseInt(r.cells[parseInt(k.slice(1),10)+1].getAttribute('data-rank'),10);}\n"
    "Array.prototype.forEach.call(document.querySelectorAll('#grid-table "
    "th[data-sort]'),function(th){\n"
    " th.addEventListener('click',function(){var k=th.getAttribute('data-sort');\n"
    "  dir=last===k?-dir:1;last=k;rows.sort(function(a,b){var x=key(a,k),y=key(b,k);\n"
    "   return "
    "x<y?-dir:x>y?dir:0;});rows.forEach(function(r){body.appendChild(r);});});});\n"
    "function open(){var o=document.querySelector('article.task.open');\n"
    " if(o)o.classList.remove('open');var h=decodeURIComponent(location.hash.slice(1));\n"
    " if(h.indexOf('task=')!==0)return;var t=document.getElementById(h);\n"
    " if(t){t.classList.add('open');t.scrollTop=0;}}\n"
    "window.addEventListener('hashchange',open);filter();open();\n"
    "document.addEventListener('keydown',function(e){\n"
    " if(e.key==='Escape'&&document.querySelector('article.task.open'))location.hash='"
    "grid';});\n"
    "document.body.setAttribute('data-ready','1');\n"
    "})();\n"
    "</script>\n";

void sx_report_html(FILE *out, const sx_report_t *r)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
          "<title>streamex report</title>\n"
          /* Set before the body is parsed: the task views are hidden from
           * the start, never laid out, which is what keeps a large report
           * (10 methods x 402 tasks) quick to open
           * (docs/internals/measurements.md). */
          "<script>document.documentElement.className='js'</script>\n",
          out);
    write_style(out);
    fputs("</head>\n<body>\n<h1>streamex report</h1>\n<p class=\"muted\">", out);
    sx_report_escape(out, r->out_dir);
    fputs("</p>\n<nav><a href=\"#overview\">overview</a><a href=\"#grid\">tasks x "
          "methods</a><a href=\"#time\">time</a><a href=\"#tasks\">tasks</a></nav>\n"
          "<section id=\"overview\"><h2>Overview</h2>\n",
          out);
    write_run(out, r);
    write_methods(out, r);
    write_comparisons(out, r);
    fputs("</section>\n<section id=\"grid\"><h2>Tasks x methods</h2>\n"
          "<p class=\"muted\">a click on a task opens it below; a click on a column "
          "header sorts</p>\n",
          out);
    write_grid(out, r);
    fputs("</section>\n<section id=\"time\"><h2>Time</h2>\n", out);
    write_step_totals(out, r);
    write_histogram(out, r);
    write_slowest(out, r);
    write_workers(out, r);
    fputs("</section>\n<section id=\"tasks\"><h2>Tasks</h2>\n", out);
    for (size_t i = 0; i < r->task_count; i++)
        write_task(out, r, i);
    fputs("</section>\n", out);
    fputs(s_script, out);
    fputs("</body></html>\n", out);
}
