/* gcheck.c: published serving figures against the simulator (gcheck.h).
 *
 * The refs document is kept whole (struct gcheck_refs) and each point
 * borrows its strings from it. A point becomes a config built in memory:
 * cloud_only; one group of `batch` tenants that each send one request at
 * t = 0 (a static batch) or of `concurrency` tenants that each send
 * LOOP_REQUESTS back to back (a closed loop, in lockstep, so every round
 * is the steady state and the whole run is measured); fixed lengths; a WAN
 * of RTT 1 ns at 1 Pb/s, so that only the server is timed; one replica of
 * the point's GPU preset, tp and model, its weights and KV cache in the
 * point's formats and its KV policy (paged unless the point says), and
 * the tables folder, whose operator table of that GPU, model and tp prices
 * the iterations when it has one (cfg.c; else the cost is derived).
 * Prompts are prefilled whole, as the engines of these figures do: the
 * chunk is the prompt; a static batch's together (its token budget holds
 * every prompt and a decode token of each), a closed loop's within
 * CLOSED_BUDGET tokens an iteration (or one prompt and a decode token of
 * each client, when more). The rows keep the refs' order; a statistic is
 * over the simulated rows of one class. The metrics (GCHECK_METRICS), the
 * classes' goals (classes[]) and the rows' columns (COLUMNS) are each one
 * table. With gpu_only the server's step overhead is 0. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "gcheck.h"

#include "cfg.h"
#include "cost.h"
#include "fs.h"
#include "gpu.h"
#include "jx.h"
#include "mem.h"
#include "report.h"
#include "shape.h"
#include "sweep.h"
#include "order.h"

#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define LOOP_REQUESTS 6   /* per client of a closed loop */
#define CLOSED_BUDGET 8192 /* a closed loop's token budget an iteration:
			      the default of TensorRT-LLM's max_num_tokens,
			      LMDeploy's max_prefill_token_num and vLLM 1's
			      max_num_batched_tokens on a large GPU */
#define WAN_BPS 1e15
#define WAN_RTT_S 1e-9    /* the smallest a config takes is > 0 */

static double num_at(const json_t *all, const char *key, const char *q)
{
	const json_t *v = json_object_get(all, key);

	return json_number_value(q ? json_object_get(v, q) : v);
}

static double predict_tpot(const json_t *all, const struct gcheck_point *p)
{
	(void)p;
	return num_at(all, "tpot_s", NULL);
}

static double predict_throughput(const json_t *all,
				 const struct gcheck_point *p)
{
	(void)p;
	return num_at(all, "tokens_per_s", NULL);
}

static double predict_ttft(const json_t *all, const struct gcheck_point *p)
{
	(void)p;
	return num_at(all, "ttft_s", "p50");
}

static double predict_e2e(const json_t *all, const struct gcheck_point *p)
{
	return num_at(all, "ttft_s", "mean") +
	       (double)(p->output_tokens - 1) * num_at(all, "tpot_s", NULL);
}

struct metric {
	const char *name;
	enum gcheck_class cls;
	double (*predict)(const json_t *all, const struct gcheck_point *p);
	const char *meaning;
};

#define METRIC_ROW(kind, name, cls, fn, meaning) { name, cls, fn, meaning },
static const struct metric metrics[] = { GCHECK_METRICS(METRIC_ROW) };
#undef METRIC_ROW
#define METRIC_NAME(kind, name, ...) name,
static const char *const metric_names[] = { GCHECK_METRICS(METRIC_NAME) NULL };
#undef METRIC_NAME

/* The goals of each class: the most the median and the worst
 * |predicted/published - 1| may be (INFINITY: no goal). */
static const struct {
	const char *name;
	double median_max, worst_max;
} classes[GCHECK_CLASS_N] = {
	[GCHECK_DECODE] = { "decode", 0.10, 0.25 },
	[GCHECK_PREFILL] = { "prefill", INFINITY, 0.35 },
	[GCHECK_BOUND] = { "concurrency-bound", INFINITY, 0.25 },
};

/* Whether metric k's figures may be of class cls. */
static bool metric_in(size_t k, enum gcheck_class cls)
{
	return metrics[k].cls == (cls == GCHECK_BOUND ? GCHECK_DECODE : cls);
}

/* ---- reading REFS ---- */

/* "batch" or "concurrency" at obj[key]: a positive integer, or 0 when
 * null or absent. */
static int read_count(struct jx *x, json_t *v, const char *p, const char *key,
		      long long *out)
{
	json_t *c = json_object_get(v, key);

	*out = 0;
	if (!c || json_is_null(c))
		return 0;
	return jx_int(x, v, p, key, 1, 1 << 20, JX_REQUIRED_INT, out);
}

/* Who and what was served: GPU, tp, model, precision, batch, lengths. */
static int read_setting(struct jx *x, json_t *v, const char *p,
			struct gcheck_point *pt)
{
	static const char *const dtypes[] = { "fp16", "bf16", "fp8", NULL };
	static const char *const kv_dtypes[] = { "fp16", "fp8", NULL };
	char cp[JX_PTR_MAX];
	long long tp;
	int gpu, dtype, kv_dtype, kv_policy;

	if (jx_enum(x, v, p, "gpu", gpu_preset_names(), NULL, &gpu) < 0 ||
	    jx_int(x, v, p, "tp", 1, 64, JX_REQUIRED_INT, &tp) < 0 ||
	    jx_str(x, v, p, "model", NULL, &pt->model) < 0)
		return -1;
	pt->gpu = gpu_preset_names()[gpu];
	pt->tp = (int)tp;
	if (!shape_find(pt->model))
		return jx_fail(x, jx_child(cp, p, "model"), "the name of a "
			       "built-in model (models/shape.c)",
			       json_object_get(v, "model"));
	if (jx_enum(x, v, p, "dtype", dtypes, NULL, &dtype) < 0 ||
	    jx_enum(x, v, p, "kv_dtype", kv_dtypes, "fp16", &kv_dtype) < 0 ||
	    jx_enum(x, v, p, "kv_policy", cfg_kv_names, "paged",
		    &kv_policy) < 0 ||
	    read_count(x, v, p, "batch", &pt->batch) < 0 ||
	    read_count(x, v, p, "concurrency", &pt->concurrency) < 0)
		return -1;
	pt->weight_dtype = !strcmp(dtypes[dtype], "fp8") ? "fp8" : "fp16";
	pt->kv_dtype = kv_dtypes[kv_dtype];
	pt->kv_policy = cfg_kv_names[kv_policy];
	if (!pt->batch == !pt->concurrency)
		return jx_fail(x, jx_child(cp, p, "batch"), "a static batch, or "
			       "null with a concurrency (one of the two)",
			       json_object_get(v, "batch"));
	return jx_int(x, v, p, "prompt_tokens", 1, 1 << 20, JX_REQUIRED_INT,
		      &pt->prompt_tokens) < 0 ||
	       jx_int(x, v, p, "output_tokens", 1, 1 << 20, JX_REQUIRED_INT,
		      &pt->output_tokens) < 0 ? -1 : 0;
}

/* The optional [lo, hi] of the source's repeated measurements. */
static int read_range(struct jx *x, json_t *v, const char *p)
{
	char cp[JX_PTR_MAX];
	double *r;
	size_t n = 0;
	int rc = 0;

	if (!json_object_get(v, "repeat_range_s"))
		return 0;
	if (jx_nums(x, v, p, "repeat_range_s", JX_POS, 0, &r, &n) < 0)
		return -1;
	if (n != 2)
		rc = jx_fail(x, jx_child(cp, p, "repeat_range_s"), "[lo, hi]",
			     json_object_get(v, "repeat_range_s"));
	free(r);
	return rc;
}

/* What was published and where: the figure, its source and the words. */
static int read_figure(struct jx *x, json_t *v, const char *p,
		       struct gcheck_point *pt)
{
	const char *s;
	bool assumed;
	int metric;

	if (jx_str(x, v, p, "framework", NULL, &pt->framework) < 0 ||
	    jx_enum(x, v, p, "metric", metric_names, NULL, &metric) < 0 ||
	    jx_num(x, v, p, "value", JX_POS, JX_REQUIRED, &pt->value) < 0 ||
	    jx_str(x, v, p, "source", NULL, &s) < 0 ||
	    jx_str(x, v, p, "where", NULL, &s) < 0 ||
	    jx_str(x, v, p, "quote", NULL, &s) < 0 ||
	    jx_str(x, v, p, "note", "", &s) < 0 ||
	    jx_str(x, v, p, "kv_note", "", &s) < 0 ||
	    jx_str(x, v, p, "model_note", "", &s) < 0 ||
	    jx_bool(x, v, p, "dtype_assumed", 0, &assumed) < 0)
		return -1;
	pt->metric = (enum gcheck_metric)metric;
	return read_range(x, v, p);
}

static int read_point(struct jx *x, json_t *v, const char *p,
		      struct gcheck_point *pt)
{
	static const char *const keys[] = { "id", "gpu", "tp", "model",
		"model_note", "framework", "dtype", "dtype_assumed", "kv_dtype",
		"kv_policy", "kv_note", "batch",
		"concurrency", "prompt_tokens", "output_tokens", "metric",
		"value", "repeat_range_s", "source", "where", "quote", "note",
		NULL };

	char cp[JX_PTR_MAX];

	if (jx_object(x, v, p, keys) < 0 ||
	    jx_str(x, v, p, "id", NULL, &pt->id) < 0 ||
	    read_setting(x, v, p, pt) < 0 || read_figure(x, v, p, pt) < 0)
		return -1;
	/* a time per token after the first needs a second token */
	if (pt->metric == GCHECK_M_TPOT && pt->output_tokens < 2)
		return jx_fail(x, jx_child(cp, p, "output_tokens"), "2 or more "
			       "for a tpot_s figure (a time per output token "
			       "after the first)",
			       json_object_get(v, "output_tokens"));
	return 0;
}

/* Every point of doc["points"] into r, each id new. */
static int read_points(struct jx *x, json_t *doc, struct gcheck_refs *r)
{
	json_t *a = json_object_get(doc, "points");
	char p[JX_PTR_MAX], ip[JX_PTR_MAX];

	if (!json_is_array(a) || json_array_size(a) == 0)
		return jx_fail(x, "/points", "a non-empty array of points", a);
	r->v = xcalloc(json_array_size(a), sizeof(*r->v));
	for (r->n = 0; r->n < json_array_size(a); r->n++) {
		jx_index(p, "/points", r->n);
		if (read_point(x, json_array_get(a, r->n), p, &r->v[r->n]) < 0)
			return -1;
		for (size_t i = 0; i < r->n; i++)
			if (!strcmp(r->v[i].id, r->v[r->n].id))
				return jx_fail(x, jx_child(ip, p, "id"), "an id "
					       "no point before has",
					       json_object_get(json_array_get(
						       a, r->n), "id"));
	}
	return 0;
}

/* "overhead": published figures kept beside the points, not simulated:
 * an array of objects. */
static int read_others(struct jx *x, json_t *ov)
{
	char p[JX_PTR_MAX];

	if (!json_is_array(ov))
		return jx_fail(x, "/overhead", "an array of objects", ov);
	for (size_t i = 0; i < json_array_size(ov); i++)
		if (!json_is_object(json_array_get(ov, i)))
			return jx_fail(x, jx_index(p, "/overhead", i),
				       "an object", json_array_get(ov, i));
	return 0;
}

int gcheck_refs_load(struct gcheck_refs *r, const char *path, struct err *e)
{
	static const char *const keys[] = { "about", "points", "overhead",
		NULL };
	struct jx x = { .file = path, .err = e };
	json_t *ov;
	const char *about;

	*r = (struct gcheck_refs){ .file = xstrdup(path) };
	if (!(r->doc = jx_load(path, e)) || jx_object(&x, r->doc, "", keys) < 0 ||
	    jx_str(&x, r->doc, "", "about", NULL, &about) < 0)
		goto fail;
	ov = json_object_get(r->doc, "overhead");
	if (ov && read_others(&x, ov) < 0)
		goto fail;
	if (read_points(&x, r->doc, r) == 0)
		return 0;
fail:
	gcheck_refs_release(r);
	return -1;
}

void gcheck_refs_release(struct gcheck_refs *r)
{
	json_decref(r->doc);
	free(r->file);
	free(r->v);
	*r = (struct gcheck_refs){ 0 };
}

/* ---- simulating ---- */

/* The config of point p, as this file's header says. */
static json_t *point_doc(const struct gcheck_point *p,
			 const struct gcheck_opts *o, const char *tables)
{
	long long n = p->batch ? p->batch : p->concurrency;
	long long budget = p->batch ? n * (p->prompt_tokens + 1)
			   : CLOSED_BUDGET > n + p->prompt_tokens + 1
			   ? CLOSED_BUDGET : n + p->prompt_tokens + 1;
	json_t *gpu = json_pack("{s:s}", "preset", p->gpu);

	if (o->gpu_only)
		json_object_set_new(gpu, "overhead_s", json_real(0));
	if (tables)
		json_object_set_new(gpu, "tables", json_string(tables));
	return json_pack("{s:s, s:i, s:{s:s}, s:[{s:s, s:I, s:{s:s, s:I, s:I,"
			 " s:I, s:i, s:i}, s:{s:f, s:f, s:f}}], s:{s:i, s:I, s:I,"
			 " s:I, s:I, s:s, s:s, s:s, s:s, s:i, s:o}}",
			 "name", p->id, "seed", 1, "protocol", "kind", "cloud_only",
			 "tenants", "name", "clients", "count", (json_int_t)n,
			 "workload", "arrival", "closed", "requests",
			 (json_int_t)(p->batch ? 1 : LOOP_REQUESTS),
			 "prompt_tokens", (json_int_t)p->prompt_tokens,
			 "output_tokens", (json_int_t)p->output_tokens,
			 "think_s", 0, "start_s", 0,
			 "wan", "rtt_s", WAN_RTT_S, "up_bps", WAN_BPS,
			 "down_bps", WAN_BPS,
			 "cloud", "replicas", 1, "max_batch_tokens",
			 (json_int_t)budget,
			 "prefill_chunk_tokens", (json_int_t)p->prompt_tokens,
			 "max_num_seqs", (json_int_t)(n > 256 ? n : 256),
			 /* the engines served these lengths */
			 "context_tokens",
			 (json_int_t)(p->prompt_tokens + p->output_tokens),
			 "model", p->model, "weight_dtype", p->weight_dtype,
			 "kv_dtype", p->kv_dtype, "kv_policy", p->kv_policy,
			 "tp", p->tp, "gpu", gpu);
}

/* Simulates row's point, the config named name in messages. */
static void run_point(struct gcheck_row *row, const char *name,
		      const struct gcheck_opts *o, const char *tables)
{
	struct cfg c;
	struct cost k;
	json_t *sum;
	long long kv_tokens;

	row->cls = metrics[row->pt.metric].cls;
	if (cfg_parse(&c, point_doc(&row->pt, o, tables), name, NULL, 0, NULL,
		      &row->refused) < 0)
		return;
	kv_tokens = c.cloud.kv_capacity_tokens;
	cost_init(&k, &c.cloud);
	HS_ASSERT(k.by_ops && !k.table); /* the configs above name no table */
	snprintf(row->pricing, sizeof(row->pricing), "%s", cost_pricing(&k));
	sum = rep_simulate(&c, &row->refused);
	cfg_release(&c);
	if (!sum)
		return;
	row->priced_by = k.ops.measured ? "measured" : "derived";
	if (row->cls == GCHECK_DECODE && row->pt.concurrency *
	    (row->pt.prompt_tokens + row->pt.output_tokens) > kv_tokens)
		row->cls = GCHECK_BOUND;
	row->predicted = metrics[row->pt.metric].predict(
		json_object_get(sum, "all"), &row->pt);
	json_decref(sum);
}

static void progress(FILE *f, const struct gcheck_row *row, size_t i,
		     size_t n)
{
	fprintf(f, "gpu check: %zu/%zu %s: ", i + 1, n, row->pt.id);
	if (row->refused.msg[0])
		fprintf(f, "not simulated: %s\n", row->refused.msg);
	else
		fprintf(f, "%s published %.4g, predicted %.4g (x%.3f, %s)\n",
			metrics[row->pt.metric].name, row->pt.value,
			row->predicted, gcheck_ratio(row), row->priced_by);
}

/* The tables folder, absolute, into g; -1 unless it is a folder whose
 * JSON files all read, and every one but the curves (kind "gpu-curves")
 * as an operator table (a corrupt or empty table is bad input, not a
 * point the simulator refuses). */
static int resolve_tables(struct gcheck *g, const char *dir, struct err *e)
{
	struct stat st;
	char pat[4200];
	glob_t gl;
	int rc = 0;

	if (!dir)
		return 0;
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    !(g->tables = realpath(dir, NULL)))
		return err_set(e, "the tables folder '%s': %s", dir,
			       errno ? strerror(errno) : "not a folder");
	snprintf(pat, sizeof(pat), "%s/*.json", g->tables);
	if (glob(pat, 0, NULL, &gl) != 0)
		return 0;
	for (size_t i = 0; i < gl.gl_pathc && !rc; i++) {
		json_t *t = jx_load(gl.gl_pathv[i], e);
		const char *kind = json_string_value(json_object_get(t, "kind"));
		const char *model = json_string_value(json_object_get(t, "model"));
		struct optab tab;

		rc = !t ? -1
		   : kind && !strcmp(kind, "gpu-curves") ? 0
		   : optab_parse(&tab, t, gl.gl_pathv[i], model ? model : "",
				 e);
		json_decref(t);
	}
	globfree(&gl);
	return rc;
}

int gcheck_run(struct gcheck *g, const struct gcheck_refs *r,
	       const struct gcheck_opts *o, struct err *e)
{
	char name[1100], p[JX_PTR_MAX];

	*g = (struct gcheck){ .refs = r->file };
	errno = 0;
	if (resolve_tables(g, o->tables, e) < 0)
		return -1;
	g->rows = xcalloc(r->n, sizeof(*g->rows));
	for (g->n = 0; g->n < r->n; g->n++) {
		struct gcheck_row *row = &g->rows[g->n];

		*row = (struct gcheck_row){ .pt = r->v[g->n], .predicted = NAN };
		snprintf(name, sizeof(name), "%s: %s", r->file,
			 jx_index(p, "/points", g->n));
		run_point(row, name, o, g->tables);
		if (o->progress)
			progress(o->progress, row, g->n, r->n);
	}
	return 0;
}

void gcheck_release(struct gcheck *g)
{
	free(g->tables);
	free(g->rows);
	*g = (struct gcheck){ 0 };
}

/* ---- statistics ---- */

double gcheck_ratio(const struct gcheck_row *row)
{
	return row->predicted / row->pt.value;
}

typedef const char *key_fn(const struct gcheck_row *row);

static const char *key_gpu(const struct gcheck_row *row)
{
	return row->pt.gpu;
}

static const char *key_source(const struct gcheck_row *row)
{
	return row->pt.framework;
}

static const char *key_pricing(const struct gcheck_row *row)
{
	return row->pricing;
}

static key_fn *const by_key[] = { [GCHECK_BY_GPU] = key_gpu,
				  [GCHECK_BY_SOURCE] = key_source };

/* Whether row counts in a statistic of cls (by, value). */
static bool counts(const struct gcheck_row *row, enum gcheck_class cls,
		   enum gcheck_by by, const char *value)
{
	return !isnan(row->predicted) && row->cls == cls &&
	       (by == GCHECK_ALL || !strcmp(by_key[by](row), value));
}

struct gcheck_stat gcheck_stat(const struct gcheck_row *rows, size_t n,
			       enum gcheck_class cls, enum gcheck_by by,
			       const char *value)
{
	struct gcheck_stat s = { .median = NAN, .worst = NAN };
	double *d = xcalloc(n ? n : 1, sizeof(double));

	for (size_t i = 0; i < n; i++)
		if (counts(&rows[i], cls, by, value))
			d[s.n++] = fabs(gcheck_ratio(&rows[i]) - 1);
	if (s.n) {
		s.median = order_median(d, s.n); /* d sorted */
		s.worst = d[s.n - 1];
	}
	free(d);
	return s;
}

bool gcheck_holds(enum gcheck_class cls, const struct gcheck_stat *s)
{
	return s->n > 0 && s->median <= classes[cls].median_max &&
	       s->worst <= classes[cls].worst_max;
}

/* Whether rows[i] is the first row with its key. */
static bool first_of(const struct gcheck *g, size_t i, key_fn *key)
{
	for (size_t j = 0; j < i; j++)
		if (!strcmp(key(&g->rows[j]), key(&g->rows[i])))
			return false;
	return true;
}

/* The number of rows[i]'s key among the distinct keys but "", from 1,
 * in the order they first appear. */
static size_t number_of(const struct gcheck *g, size_t i, key_fn *key)
{
	size_t k = 0, j;

	for (j = 0; strcmp(key(&g->rows[j]), key(&g->rows[i])); j++)
		k += first_of(g, j, key) && key(&g->rows[j])[0];
	return k + 1;
}

/* ---- the rows as JSON and CSV, and the summary ---- */

/* The columns of a row: X(name, kind, value of row r), kind S a string
 * (NULL: none), I an integer (0: none), N a number (NAN: none). */
#define COLUMNS(X)                                                 \
	X("id", S, r->pt.id)                                        \
	X("gpu", S, r->pt.gpu)                                      \
	X("model", S, r->pt.model)                                  \
	X("tp", I, r->pt.tp)                                        \
	X("batch", I, r->pt.batch)                                  \
	X("concurrency", I, r->pt.concurrency)                      \
	X("prompt_tokens", I, r->pt.prompt_tokens)                  \
	X("output_tokens", I, r->pt.output_tokens)                  \
	X("framework", S, r->pt.framework)                          \
	X("metric", S, metrics[r->pt.metric].name)                  \
	X("published", N, r->pt.value)                              \
	X("predicted", N, r->predicted)                             \
	X("ratio", N, gcheck_ratio(r))                              \
	X("priced_by", S, r->priced_by)                             \
	X("pricing", S, r->pricing[0] ? r->pricing : NULL)          \
	X("refused", S, r->refused.msg[0] ? r->refused.msg : NULL)

static json_t *json_S(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *json_I(long long v)
{
	return v ? json_integer(v) : json_null();
}

static json_t *json_N(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static void csv_S(FILE *f, const char *s)
{
	if (s)
		sweep_csv_field(f, s);
}

static void csv_I(FILE *f, long long v)
{
	if (v)
		fprintf(f, "%lld", v);
}

static void csv_N(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.9g", v);
}

static json_t *row_json(const struct gcheck_row *r)
{
	json_t *o = json_object();

#define COL_JSON(name, kind, value) json_object_set_new(o, name, json_##kind(value));
	COLUMNS(COL_JSON)
#undef COL_JSON
	return o;
}

static void csv_header(FILE *f)
{
	const char *sep = "";

#define COL_HEAD(name, ...) fprintf(f, "%s%s", sep, name), sep = ",";
	COLUMNS(COL_HEAD)
#undef COL_HEAD
	fputc('\n', f);
}

static void csv_row(FILE *f, const struct gcheck_row *r)
{
	const char *sep = "";

#define COL_CSV(name, kind, value) fputs(sep, f), sep = ",", csv_##kind(f, value);
	COLUMNS(COL_CSV)
#undef COL_CSV
	fputc('\n', f);
}

static json_t *stat_json(const struct gcheck_stat *s)
{
	return json_pack("{s:I, s:o, s:o}", "points", (json_int_t)s->n,
			 "median", json_N(s->median), "worst", json_N(s->worst));
}

/* Whether rows[i] is the first of its GPU (or source) and that group has
 * simulated rows of cls: their statistic into s. */
static bool group_at(const struct gcheck *g, size_t i, enum gcheck_class cls,
		     enum gcheck_by by, struct gcheck_stat *s)
{
	if (!first_of(g, i, by_key[by]))
		return false;
	*s = gcheck_stat(g->rows, g->n, cls, by, by_key[by](&g->rows[i]));
	return s->n > 0;
}

/* {KEY: stat} for each GPU or source of cls's simulated rows. */
static json_t *groups_json(const struct gcheck *g, enum gcheck_class cls,
			   enum gcheck_by by)
{
	json_t *o = json_object();
	struct gcheck_stat s;

	for (size_t i = 0; i < g->n; i++)
		if (group_at(g, i, cls, by, &s))
			json_object_set_new(o, by_key[by](&g->rows[i]),
					    stat_json(&s));
	return o;
}

static json_t *class_json(const struct gcheck *g, enum gcheck_class cls)
{
	struct gcheck_stat s = gcheck_stat(g->rows, g->n, cls, GCHECK_ALL, NULL);
	json_t *o = stat_json(&s), *m = json_array();

	for (size_t k = 0; k < GCHECK_METRIC_N; k++)
		if (metric_in(k, cls))
			json_array_append_new(m, json_string(metrics[k].name));
	json_object_set_new(o, "metrics", m);
	json_object_set_new(o, "goal", json_pack("{s:o, s:o}", "median",
		json_N(classes[cls].median_max), "worst",
		json_N(classes[cls].worst_max)));
	json_object_set_new(o, "holds", json_boolean(gcheck_holds(cls, &s)));
	json_object_set_new(o, "by_gpu", groups_json(g, cls, GCHECK_BY_GPU));
	json_object_set_new(o, "by_source", groups_json(g, cls,
							 GCHECK_BY_SOURCE));
	return o;
}

json_t *gcheck_json(const struct gcheck *g)
{
	json_t *rows = json_array(), *sum = json_object();

	for (size_t i = 0; i < g->n; i++)
		json_array_append_new(rows, row_json(&g->rows[i]));
	for (int c = 0; c < GCHECK_CLASS_N; c++)
		json_object_set_new(sum, classes[c].name,
				    class_json(g, (enum gcheck_class)c));
	return json_pack("{s:s, s:o, s:o, s:o}", "refs", g->refs, "tables",
			 json_S(g->tables), "points", rows, "summary", sum);
}

int gcheck_writable(const char *path, bool replace, struct err *e)
{
	static const char *const ours[] = { "refs", "points", "summary", NULL };
	char head[1024];
	FILE *f;
	json_t *doc;
	bool other = false;

	/* replaces only a check of its own: its JSON (whose keys, not a
	 * provenance, say so: another command's file has one), or its
	 * CSV's header */
	f = fmemopen(head, sizeof(head), "w");
	csv_header(f);
	fclose(f);
	head[strcspn(head, "\n")] = '\0';
	doc = json_load_file(path, 0, NULL);
	for (size_t i = 0; doc && ours[i]; i++)
		other |= !json_object_get(doc, ours[i]);
	json_decref(doc);
	if (other)
		return err_set(e, "'%s' exists and is not a file gpu check "
			       "wrote: refusing to replace it (remove it, or "
			       "write elsewhere)", path);
	return jx_replaceable(path, ours, head, replace, e);
}

int gcheck_save(const struct gcheck *g, const char *path, struct err *e)
{
	size_t n = strlen(path);
	struct fs_atomic a;
	json_t *j;
	FILE *f;
	int rc;

	if (gcheck_writable(path, true, e) < 0)
		return -1;
	if (n >= 5 && !strcmp(path + n - 5, ".json")) {
		rc = jx_save(path, j = gcheck_json(g), e);
		json_decref(j);
		return rc;
	}
	if (!(f = fs_atomic_open(&a, path, e)))
		return -1;
	csv_header(f);
	for (size_t i = 0; i < g->n; i++)
		csv_row(f, &g->rows[i]);
	return fs_atomic_commit(&a, e);
}

/* ---- the printed table ---- */

static void print_row(const struct gcheck *g, size_t i, FILE *f)
{
	const struct gcheck_row *r = &g->rows[i];
	char bc[24], len[48];

	snprintf(bc, sizeof(bc), "%s%lld", r->pt.batch ? "b" : "c",
		 r->pt.batch ? r->pt.batch : r->pt.concurrency);
	snprintf(len, sizeof(len), "%lld/%lld", r->pt.prompt_tokens,
		 r->pt.output_tokens);
	fprintf(f, "%-34s %-9s %-10s %2d %5s %10s %-16s %10.4g ", r->pt.id,
		r->pt.gpu, r->pt.model, r->pt.tp, bc, len,
		metrics[r->pt.metric].name, r->pt.value);
	if (isnan(r->predicted)) {
		fprintf(f, "not simulated: %s\n", r->refused.msg);
		return;
	}
	fprintf(f, "%10.4g %6.3f  S%-3zu %s P%zu\n", r->predicted,
		gcheck_ratio(r), number_of(g, i, key_source), r->priced_by,
		number_of(g, i, key_pricing));
}

/* Each distinct key, numbered as the rows name it ("S1"). */
static void print_keys(const struct gcheck *g, const char *title,
		       char letter, key_fn *key, FILE *f)
{
	fprintf(f, "%s:\n", title);
	for (size_t i = 0; i < g->n; i++)
		if (first_of(g, i, key) && key(&g->rows[i])[0])
			fprintf(f, "  %c%-3zu %s\n", letter,
				number_of(g, i, key), key(&g->rows[i]));
}

static void print_stat(const char *label, const struct gcheck_stat *s,
		       FILE *f)
{
	fprintf(f, "  %-10s %3zu points, median %5.1f%%, worst %5.1f%%\n",
		label, s->n, 100 * s->median, 100 * s->worst);
}

/* A line for each GPU (or source) of cls's simulated rows. */
static void print_groups(const struct gcheck *g, enum gcheck_class cls,
			 enum gcheck_by by, FILE *f)
{
	char label[32];
	struct gcheck_stat s;

	for (size_t i = 0; i < g->n; i++) {
		if (!group_at(g, i, cls, by, &s))
			continue;
		if (by == GCHECK_BY_GPU)
			snprintf(label, sizeof(label), "%s", g->rows[i].pt.gpu);
		else
			snprintf(label, sizeof(label), "S%zu",
				 number_of(g, i, key_source));
		print_stat(label, &s, f);
	}
}

/* The class's line with its goals, then by GPU and by source. */
static void print_class(const struct gcheck *g, enum gcheck_class cls,
			FILE *f)
{
	struct gcheck_stat s = gcheck_stat(g->rows, g->n, cls, GCHECK_ALL, NULL);

	fprintf(f, "%s (", classes[cls].name);
	for (size_t k = 0, n = 0; k < GCHECK_METRIC_N; k++)
		if (metric_in(k, cls))
			fprintf(f, "%s%s", n++ ? ", " : "", metrics[k].name);
	if (!s.n) {
		fputs("): no points simulated\n", f);
		return;
	}
	fprintf(f, "): %zu points, |predicted/published - 1| median %.1f%%, "
		"worst %.1f%%; goal", s.n, 100 * s.median, 100 * s.worst);
	if (isfinite(classes[cls].median_max))
		fprintf(f, " median <= %g%%,", 100 * classes[cls].median_max);
	fprintf(f, " worst <= %g%%: %s\n", 100 * classes[cls].worst_max,
		gcheck_holds(cls, &s) ? "holds" : "does not hold");
	print_groups(g, cls, GCHECK_BY_GPU, f);
	print_groups(g, cls, GCHECK_BY_SOURCE, f);
}

void gcheck_print(const struct gcheck *g, FILE *f)
{
	size_t refused = 0;

	fprintf(f, "%-34s %-9s %-10s %2s %5s %10s %-16s %10s %10s %6s  %s\n",
		"id", "gpu", "model", "tp", "b/c", "in/out", "metric",
		"published", "predicted", "ratio", "source, pricing");
	for (size_t i = 0; i < g->n; i++) {
		print_row(g, i, f);
		refused += isnan(g->rows[i].predicted);
	}
	print_keys(g, "sources (framework)", 'S', key_source, f);
	print_keys(g, "pricing", 'P', key_pricing, f);
	if (refused)
		fprintf(f, "%zu of %zu points not simulated (their rows say "
			"why)\n", refused, g->n);
	for (int c = 0; c < GCHECK_CLASS_N; c++)
		print_class(g, (enum gcheck_class)c, f);
}

void gcheck_legend(FILE *f)
{
	fputs("metrics (a point's \"metric\"), their class, and what of the run's\n"
	      "summary is compared with the figure:\n", f);
	for (size_t k = 0; k < GCHECK_METRIC_N; k++)
		fprintf(f, "  %-16s %-7s %s\n", metrics[k].name,
			classes[metrics[k].cls].name, metrics[k].meaning);
	fputs("goals (reported, not enforced):", f);
	for (int c = 0; c < GCHECK_CLASS_N; c++) {
		fprintf(f, "%s %s", c ? ";" : "", classes[c].name);
		if (isfinite(classes[c].median_max))
			fprintf(f, " median <= %g%%,", 100 * classes[c].median_max);
		fprintf(f, " worst <= %g%%", 100 * classes[c].worst_max);
	}
	fputs("\n", f);
}
