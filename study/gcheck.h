/* gcheck.h: the simulator's GPU costs against published end-to-end
 * serving figures ("hybridspec gpu check"). A file of reference points
 * (REFS, configs/gpu-check/refs.json), each a figure a serving framework
 * published for a model, GPU, tp, batch and lengths; each point simulated
 * cloud_only in its published setting, and how far the prediction is from
 * the figure, overall, by GPU and by source. Nothing is fitted to the
 * figures: they check the operator tables and the derived costs.
 *
 * REFS: {"about": TEXT, "points": [POINT], "overhead": [OBJECT]} with
 * "overhead" optional (published figures kept beside the points, not
 * simulated). POINT: "id" (unique), "gpu" (a preset), "tp", "model" (a
 * built-in shape), "framework", "dtype" ("fp16", "bf16" or "fp8": the
 * weights), "batch" (a static batch) or "concurrency" (a closed loop), the
 * other null or absent, "prompt_tokens", "output_tokens", "metric"
 * (GCHECK_METRICS), "value" (> 0), "source", "where", "quote"; optional
 * "note", "model_note", "dtype_assumed" (true when the source does not
 * state the precision), "kv_dtype" ("fp16", the default, or "fp8"),
 * "kv_policy" (cfg.h's KV_LIST names; default "paged"), "kv_note" (why
 * those) and "repeat_range_s" ([lo, hi] of the source's repeated
 * measurements). */
#ifndef HS_GCHECK_H
#define HS_GCHECK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "err.h"

/* The classes of figures the goals are stated for (gcheck.c's table):
 * decode, median and worst |predicted/published - 1| <= 10% and 25%;
 * prefill, worst <= 35%; concurrency-bound, the decode figures of points
 * whose clients' requests (clients x (prompt + output) tokens) outgrow the
 * simulated KV pool, each within 25% (they count there, not in decode). */
enum gcheck_class { GCHECK_DECODE, GCHECK_PREFILL, GCHECK_BOUND,
		    GCHECK_CLASS_N };

/* The metrics a point may publish: X(KIND, name, class, predict,
 * meaning); predict is gcheck.c's function reading the figure from a
 * run's summary (only gcheck.c expands the last two). */
#define GCHECK_METRICS(X)                                                  \
	X(TPOT, "tpot_s", GCHECK_DECODE, predict_tpot,                      \
	  "all.tpot_s: mean time per output token after the first")         \
	X(THROUGHPUT, "throughput_tok_s", GCHECK_DECODE, predict_throughput, \
	  "all.tokens_per_s: output tokens/s over the whole run")           \
	X(TTFT, "ttft_s", GCHECK_PREFILL, predict_ttft,                     \
	  "all.ttft_s.p50: time to first token (RTT 1 ns)")                 \
	X(PREFILL, "prefill_s", GCHECK_PREFILL, predict_ttft,               \
	  "all.ttft_s.p50: a prefill (a static batch's at once)")           \
	X(E2E, "e2e_s", GCHECK_DECODE, predict_e2e,                         \
	  "all.ttft_s.mean + (output_tokens - 1) all.tpot_s")

#define GCHECK_METRIC_ENUM(kind, ...) GCHECK_M_##kind,
enum gcheck_metric { GCHECK_METRICS(GCHECK_METRIC_ENUM) GCHECK_METRIC_N };
#undef GCHECK_METRIC_ENUM

/* A reference point; the strings are borrowed from the refs document (the
 * GPU's from the preset table). */
struct gcheck_point {
	const char *id, *gpu, *model, *framework;
	const char *weight_dtype, *kv_dtype; /* static: number formats
						 (gpu.h's names) */
	const char *kv_policy; /* static: how the server holds the KV cache
				  (cfg.h's names; "kv_policy", default
				  paged) */
	int tp;
	long long batch;       /* a static batch: every request at t = 0; or 0 */
	long long concurrency; /* a closed loop of as many clients; or 0 */
	long long prompt_tokens, output_tokens;
	enum gcheck_metric metric;
	double value;          /* the published figure, in the metric's unit */
};

struct gcheck_refs {
	json_t *doc;             /* owned: the file, whole */
	char *file;              /* owned: its path, for messages */
	struct gcheck_point *v;  /* (n) owned */
	size_t n;
};

/* Reads path strictly. 0, or -1 with "PATH: /points/3/metric: expected
 * one of ..., got ..." in e (and r released). */
int gcheck_refs_load(struct gcheck_refs *r, const char *path, struct err *e);
void gcheck_refs_release(struct gcheck_refs *r);

/* A point and what the simulator answers. */
struct gcheck_row {
	struct gcheck_point pt; /* strings borrowed from the refs */
	enum gcheck_class cls;  /* its metric's; GCHECK_BOUND for a decode
				   figure of a point that outgrows the pool */
	double predicted;       /* NAN: not simulated (refused says why) */
	const char *priced_by;  /* static: "measured" (an operator table of
				   the folder) or "derived"; NULL when not
				   simulated */
	char pricing[320];      /* what priced the iterations (cost.h) */
	struct err refused;     /* why the config was refused; "" if it ran */
};

struct gcheck_opts {
	const char *tables; /* borrowed: the folder of operator tables; NULL:
			       none, every cost derived */
	FILE *progress;     /* borrowed: a line a point, or NULL */
	bool gpu_only;      /* no server step overhead (overhead_s 0) */
};

struct gcheck {
	const char *refs;       /* borrowed: the refs file's path */
	char *tables;           /* owned: the tables folder, absolute, or NULL */
	struct gcheck_row *rows; /* (n) owned, in the refs' order */
	size_t n;
};

/* Simulates every point of r (which must outlive g) into g. A config the
 * simulator refuses is a row with its reason. 0, or -1 with e's message
 * when the tables folder cannot be read. */
int gcheck_run(struct gcheck *g, const struct gcheck_refs *r,
	       const struct gcheck_opts *o, struct err *e);
void gcheck_release(struct gcheck *g);

/* predicted / published (NAN when not simulated). */
double gcheck_ratio(const struct gcheck_row *row);

/* Which rows a statistic is over: all of a class, or those of one GPU or
 * one source (the point's framework) among them. */
enum gcheck_by { GCHECK_ALL, GCHECK_BY_GPU, GCHECK_BY_SOURCE };

/* Median and worst |predicted/published - 1| over n simulated rows (NAN
 * when n is 0). */
struct gcheck_stat {
	size_t n;
	double median, worst;
};

/* Over the simulated rows of rows[0 .. n) of class cls; with by, only
 * those whose GPU or framework is value (ignored for GCHECK_ALL). */
struct gcheck_stat gcheck_stat(const struct gcheck_row *rows, size_t n,
			       enum gcheck_class cls, enum gcheck_by by,
			       const char *value);
/* Whether s meets the goals of cls (false when s has no rows). */
bool gcheck_holds(enum gcheck_class cls, const struct gcheck_stat *s);

/* {"refs", "tables", "points": [ROW], "summary": {"decode": {...},
 * "prefill": {...}}}; the caller decrefs. */
json_t *gcheck_json(const struct gcheck *g);
/* The rows as a table, the sources and pricings they name, and the
 * summary lines. */
void gcheck_print(const struct gcheck *g, FILE *f);
/* Whether path may take the rows: absent or empty, or (where replace) a
 * check's own JSON or CSV; never another file, of hybridspec's or not.
 * 0, or -1 with e saying what to do. */
int gcheck_writable(const char *path, bool replace, struct err *e);
/* The rows to path (gcheck_writable with replace), atomically: JSON
 * (gcheck_json) when path ends in ".json", else CSV (the JSON rows'
 * columns). 0, or -1 with e. */
int gcheck_save(const struct gcheck *g, const char *path, struct err *e);
/* Each metric and how its prediction is read, a line each. */
void gcheck_legend(FILE *f);

#endif
