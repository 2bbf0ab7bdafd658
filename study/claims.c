/* claims.c: one function a claim, each reading its inputs, building its
 * blocks (text and tables, in the order the report shows them) and deciding
 * its verdict by the thresholds below. The wording and the figures' formats
 * are the report's; a figure the report shows rounded is decided on as
 * shown, so that a verdict never contradicts its table. */
#define _DEFAULT_SOURCE /* glob */
#include "claims.h"

#include "cfg.h"
#include "cmap.h"
#include "csv.h"
#include "err.h"
#include "formula.h"
#include "jx.h"
#include "mem.h"

#include <glob.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	HIDE_SHARE, KEEP_RATIO, BATCH_SHARE, ITL_COST, BLOWUP, KNEE_CLOSE,
	CLOSE, ATTAIN, CAP_CLOSE, N_THRESHOLDS
};

/* A threshold a verdict uses: its name, value and what it decides. */
static const struct threshold {
	const char *name;
	double value;
	const char *meaning;
} thresholds[N_THRESHOLDS + 1] = {
	[HIDE_SHARE] = { "hide_share", 0.50, "(a) async hides the WAN latency "
		"when its ITL grows with the RTT at most 50% as fast as sync's "
		"(least squares)" },
	[KEEP_RATIO] = { "keep_ratio", 0.80, "(b) a draft keeps alpha high at "
		">= 80% of the reference draft's alpha (W8A16: near lossless)" },
	[BATCH_SHARE] = { "batch_share", 0.50, "(c) batching keeps the GPU busy "
		"at N tenants when one shared GPU commits >= 50% of N times the "
		"tokens/s of a dedicated one..." },
	[ITL_COST] = { "itl_cost", 0.10, "(c) ...at an ITL and a p99 TTFT at "
		"most 10% above dedicated's" },
	[BLOWUP] = { "blowup", 2, "(d) past the capacity the mean wait for the "
		"KV cache at the highest load is >= 2x the wait at the capacity" },
	[KNEE_CLOSE] = { "knee_close", 0.10, "(d) the delivered rate levels "
		"off within 10% of the capacity `formulas` gives" },
	[CLOSE] = { "close", 0.15, "(e) ITL close to drafting speed: within "
		"15% of the edge's draft time per token (from its profile)" },
	[ATTAIN] = { "attain", 0.90, "(f) a GPU carries N clients when at "
		"least 90% of their requests meet the SLO (TTFT and TPOT)" },
	[CAP_CLOSE] = { "cap_close", 0.25, "(f) the capacity claim holds where "
		"edge drafting's clients per GPU over cloud_spec's is within 25% "
		"of 1 + gamma t_d / t_v" },
	{ 0 },
};

#define TH(k) (thresholds[k].value)

/* ---- blocks ---- */

static void text(json_t *blocks, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void text(json_t *blocks, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	json_array_append_new(blocks, json_pack("{s:o}", "text",
						json_vsprintf(fmt, ap)));
	va_end(ap);
}

/* A table block of the column names cols (taken); its rows are returned
 * (borrowed) for row() and cell() to fill. */
static json_t *table_of(json_t *blocks, json_t *cols)
{
	json_t *rows = json_array();

	json_array_append_new(blocks, json_pack("{s:{s:o,s:o}}", "table",
						"columns", cols, "rows", rows));
	return rows;
}

/* The same with the columns given, NULL-terminated. */
static json_t *table(json_t *blocks, const char *const *columns)
{
	json_t *cols = json_array();

	for (size_t i = 0; columns[i]; i++)
		json_array_append_new(cols, json_string(columns[i]));
	return table_of(blocks, cols);
}

static json_t *row(json_t *rows)
{
	json_t *r = json_array();

	json_array_append_new(rows, r);
	return r;
}

static void cell(json_t *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void cell(json_t *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	json_array_append_new(r, json_vsprintf(fmt, ap));
	va_end(ap);
}

static json_t *claim(json_t *claims, const char *id, const char *title,
		     json_t **blocks)
{
	json_t *c = json_pack("{s:s,s:s,s:[],s:n}", "id", id, "title", title,
			      "blocks", "verdict");

	json_array_append_new(claims, c);
	*blocks = json_object_get(c, "blocks");
	return c;
}

static void verdict(json_t *c, json_t *blocks, const char *v)
{
	json_object_set_new(c, "verdict", json_string(v));
	text(blocks, "**Verdict: %s.**", v);
}

#define MAX_POINTS 256

/* A device's held-out bands as the sweeps take them (device/draft_band,
 * device/prefill_band): as derived, at the fast end, at the slow end */
static const char *const band_ends[] = { "none", "low", "high" };
#define NBAND_ENDS (int)(sizeof(band_ends) / sizeof(band_ends[0]))

/* ---- inputs ---- */

static bool exists(const char *path)
{
	FILE *f = fopen(path, "r");

	if (f)
		fclose(f);
	return f != NULL;
}

/* dir/sweeps/name/sweep.csv into c: 1 loaded, 0 missing (said in blocks),
 * -1 unreadable (e) */
static int load_sweep(struct csv *c, const char *dir, const char *name,
		      json_t *blocks, bool say, struct err *e)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/sweeps/%s/sweep.csv", dir, name);
	if (!exists(path)) {
		if (say)
			text(blocks, "No verdict: %s is missing.", path);
		return 0;
	}
	return csv_load(c, path, e) < 0 ? -1 : 1;
}

/* The first input that is there but cannot be read: claims_compute fails
 * with it, where a missing input only leaves its claim without a verdict.
 * Reset by claims_compute, set by opt_load. */
static struct err bad_input;
static bool bad_seen;

/* Row r's number in column col of c, or NaN with the input bad (the
 * first such kept in bad_input) where the field is not one: a claim read
 * on a 0 that stood for "abc" or nothing would give a verdict */
static double cnum(const struct csv *c, size_t r, int col)
{
	struct err e;
	double x;

	if (csv_number(c, r, col, &x, &e) == 0)
		return x;
	if (!bad_seen) {
		bad_input = e;
		bad_seen = true;
	}
	return NAN;
}

/* The JSON file at path, or NULL where it is not there (or cannot be read:
 * the first such is kept in bad_input) */
static json_t *opt_load(const char *path)
{
	struct err e;
	json_t *doc;

	if (!exists(path))
		return NULL;
	if (!(doc = jx_load(path, &e)) && !bad_seen) {
		bad_input = e;
		bad_seen = true;
	}
	return doc;
}

/* The number at ptr of the JSON file dir/rel; 0 with *have cleared when
 * the file or the number is not there */
static double num_at(const char *dir, const char *rel, const char *ptr,
		     bool *have)
{
	char path[4096];
	json_t *doc, *v;
	double x = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if (!(doc = opt_load(path))) {
		*have = false;
		return 0;
	}
	v = jx_at(doc, ptr);
	if (json_is_number(v))
		x = json_number_value(v);
	else
		*have = false;
	json_decref(doc);
	return x;
}

static double field(json_t *doc, const char *ptr)
{
	return json_number_value(jx_at(doc, ptr));
}

/* x as shown with %.6g: the report decides on what its tables show */
static double g6(double x)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.6g", x);
	return strtod(buf, NULL);
}

/* The columns of c that a claim reads, all or an error. */
static int cols(const struct csv *c, const char *const *names, int *out,
		struct err *e)
{
	for (size_t i = 0; names[i]; i++)
		if ((out[i] = csv_col(c, names[i], e)) < 0)
			return -1;
	return 0;
}

/* The distinct values of column col of c, the first max of them into out
 * (borrowed from c) in the order they first appear; returns how many it
 * kept, *more set where a value was left out. */
static size_t distinct(const struct csv *c, int col, const char **out,
		       size_t max, bool *more)
{
	size_t n = 0;

	*more = false;
	for (size_t r = 0; r < c->nrow; r++) {
		size_t i = 0;

		while (i < n && strcmp(out[i], csv_str(c, r, col)))
			i++;
		if (i < n)
			continue;
		if (n < max)
			out[n++] = csv_str(c, r, col);
		else
			*more = true;
	}
	return n;
}

/* A sweep as a table: a row per value of column row (headed head), a
 * column per value of by, in the order they first appear; each cell the
 * mean of metric (times scale, in format fmt) and its 95% half-width. */
static int pivot(json_t *blocks, const struct csv *c, const char *row_col,
		 const char *head, const char *by, const char *metric,
		 double scale, const char *fmt, struct err *e)
{
	char mean_name[128], ci_name[128], cellfmt[64];
	const char *rows_v[MAX_POINTS], *cols_v[16];
	size_t nr, nb;
	int rc_, bc, mc, cc;
	bool more;
	json_t *cols, *rows;

	snprintf(mean_name, sizeof(mean_name), "%s_mean", metric);
	snprintf(ci_name, sizeof(ci_name), "%s_ci95", metric);
	if ((rc_ = csv_col(c, row_col, e)) < 0 || (bc = csv_col(c, by, e)) < 0 ||
	    (mc = csv_col(c, mean_name, e)) < 0 ||
	    (cc = csv_col(c, ci_name, e)) < 0)
		return -1;
	nr = distinct(c, rc_, rows_v, MAX_POINTS, &more);
	nb = distinct(c, bc, cols_v, sizeof(cols_v) / sizeof(*cols_v), &more);
	cols = json_array();
	json_array_append_new(cols, json_string(head));
	for (size_t j = 0; j < nb; j++)
		json_array_append_new(cols, json_string(cols_v[j]));
	rows = table_of(blocks, cols);
	snprintf(cellfmt, sizeof(cellfmt), "%s ± %s", fmt, fmt);
	for (size_t i = 0; i < nr; i++) {
		json_t *r = row(rows);

		cell(r, "%s", rows_v[i]);
		for (size_t j = 0; j < nb; j++) {
			size_t k = c->nrow;

			/* the last row of the pair, as a table keeps the last */
			for (size_t q = 0; q < c->nrow; q++)
				if (!strcmp(csv_str(c, q, rc_), rows_v[i]) &&
				    !strcmp(csv_str(c, q, bc), cols_v[j]))
					k = q;
			if (k == c->nrow) {
				cell(r, "%s", "");
				continue;
			}
			cell(r, cellfmt, cnum(c, k, mc) * scale,
			     cnum(c, k, cc) * scale);
		}
	}
	return 0;
}

/* ---- (a) and (e): groups of a sweep over RTT ---- */

#define MAX_GROUPS 32

/* least squares slope of y on x */
struct fit {
	double m, sx, sy, sxx, sxy;
};

static void fit_add(struct fit *f, double x, double y)
{
	f->m++;
	f->sx += x;
	f->sy += y;
	f->sxx += x * x;
	f->sxy += x * y;
}

static double fit_slope(const struct fit *f)
{
	return (f->m * f->sxy - f->sx * f->sy) /
	       (f->m * f->sxx - f->sx * f->sx);
}

/* Whether the xs added span two values or more, so that a slope is one
 * (the spread of x is more than rounding's of its square) */
static bool fit_spans(const struct fit *f)
{
	return f->m >= 2 &&
	       f->m * f->sxx - f->sx * f->sx > 1e-9 * f->m * f->sxx;
}

/* The RTT sweeps' sync and async rows, grouped by acceptance: the measured
 * drafts (itl-vs-rtt) and each iid alpha (itl-vs-rtt-alpha, if there), in
 * the order they first appear. Read once; claims (a) and (e) both judge
 * them. */
struct rtt_group {
	char key[64];      /* "measured", or the alpha as the sweep writes it */
	bool measured;
	struct fit fit[2]; /* ITL against RTT: [0] sync, [1] async */
	double lo, hi;     /* async ITL, lowest and highest */
	char rtts[256];    /* the async RTTs, ms */
};

struct rtt {
	bool have;               /* itl-vs-rtt is there */
	char path[4096];         /* itl-vs-rtt's */
	struct csv sweep;        /* itl-vs-rtt, for (a)'s table */
	struct rtt_group g[MAX_GROUPS];
	size_t n;
	double alpha;            /* the measured drafts' (the async run's) */
	char alpha_text[32];     /* as the tables show it */
	char source[256];        /* where the async run's acceptance is from */
};

static struct rtt_group *group_of(struct rtt *d, const char *key)
{
	struct rtt_group *g;

	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->g[i].key, key))
			return &d->g[i];
	HS_ASSERT(d->n < MAX_GROUPS);
	g = &d->g[d->n++];
	snprintf(g->key, sizeof(g->key), "%s", key);
	g->measured = !strcmp(key, "measured");
	return g;
}

/* Adds one sweep's rows; by: the alpha column, or NULL (the measured
 * drafts). */
static int rtt_add(struct rtt *d, const struct csv *c, const char *by,
		   struct err *e)
{
	static const char *const names[] = { "protocol.kind",
		"tenants.0.wan.rtt_s", "all.itl_s.mean_mean", NULL };
	int col[3], bycol = -1;

	if (cols(c, names, col, e) < 0 ||
	    (by && (bycol = csv_col(c, by, e)) < 0))
		return -1;
	for (size_t r = 0; r < c->nrow; r++) {
		const char *k = csv_str(c, r, col[0]);
		bool async = !strcmp(k, "async");
		double x = cnum(c, r, col[1]), y = cnum(c, r, col[2]);
		struct rtt_group *g;
		size_t at;

		if (!async && strcmp(k, "sync"))
			continue;
		g = group_of(d, by ? csv_str(c, r, bycol) : "measured");
		fit_add(&g->fit[async], x, y);
		if (!async)
			continue;
		if (!g->lo || y < g->lo)
			g->lo = y;
		if (y > g->hi)
			g->hi = y;
		at = strlen(g->rtts);
		snprintf(g->rtts + at, sizeof(g->rtts) - at, "%s%.6g",
			 at ? ", " : "", 1e3 * x);
	}
	return 0;
}

static int rtt_read(struct rtt *d, const char *dir, struct err *e)
{
	struct csv alpha = { 0 };
	char path[4096];
	json_t *async;
	bool ran = false;
	int ra, rc;

	memset(d, 0, sizeof(*d));
	/* the async run: its alpha and where its acceptance comes from */
	snprintf(path, sizeof(path), "%s/runs/async/summary.json", dir);
	if ((async = opt_load(path))) {
		ran = true;
		const char *src = json_string_value(jx_at(async,
							  "/groups/0/acceptance"));

		d->alpha = json_number_value(jx_at(async, "/all/alpha"));
		snprintf(d->source, sizeof(d->source), "%s", src ? src : "");
		json_decref(async);
	}
	if (ran)
		snprintf(d->alpha_text, sizeof(d->alpha_text), "%.3f", d->alpha);
	else
		snprintf(d->alpha_text, sizeof(d->alpha_text), "unknown (no "
			 "runs/async)");
	snprintf(d->path, sizeof(d->path), "%s/sweeps/itl-vs-rtt/sweep.csv",
		 dir);
	if ((rc = load_sweep(&d->sweep, dir, "itl-vs-rtt", NULL, false, e)) <= 0)
		return rc;
	d->have = true;
	if ((ra = load_sweep(&alpha, dir, "itl-vs-rtt-alpha", NULL, false, e)) < 0)
		return -1;
	rc = rtt_add(d, &d->sweep, NULL, e) < 0 ||
	     (ra > 0 && rtt_add(d, &alpha, "tenants.0.acceptance.alpha",
				e) < 0) ? -1 : 0;
	csv_release(&alpha);
	return rc;
}

/* A group's label in the tables */
static void group_cell(json_t *r, const struct rtt *d,
		       const struct rtt_group *g)
{
	if (g->measured)
		cell(r, "measured drafts, alpha %s", d->alpha_text);
	else
		cell(r, "iid, alpha %s", g->key);
}

/* Judging the groups in order: whether the measured drafts pass, and the
 * lowest alpha from which every higher one passes (NULL: none). */
struct alpha_run {
	bool measured;
	const char *from;
};

static void alpha_run_add(struct alpha_run *a, const struct rtt_group *g,
			  bool ok)
{
	if (g->measured)
		a->measured = ok;
	else if (ok && !a->from)
		a->from = g->key;
	else if (!ok)
		a->from = NULL;
}

/* The verdict of a claim judged at the measured alpha and at iid alphas:
 * it holds at the measured one, or from a->from up, else not. */
static void alpha_verdict(json_t *c, json_t *blocks, const struct alpha_run *a,
			  const struct rtt *d, const char *failing)
{
	char v[256];

	if (a->measured) {
		verdict(c, blocks, "holds");
	} else if (a->from) {
		snprintf(v, sizeof(v), "holds only when alpha is at least %s (the "
			 "measured drafts, alpha %s, %s)", a->from, d->alpha_text,
			 failing);
		verdict(c, blocks, v);
	} else {
		verdict(c, blocks, "does not hold");
	}
}

/* ---- regions: where a claim holds over alpha and RTT or draft time ---- */

/* The points of the files matching pat, appended to pts: a measured
 * profile's "TARGET DRAFT_QUANT" at its greedy alpha, a published
 * figure's "published NAME" at its alpha */
static void points_add(json_t *pts, const char *pat, bool published)
{
	const char *ptr = published ? "/alpha" : "/alpha_greedy";
	glob_t gl;

	if (glob(pat, 0, NULL, &gl) != 0)
		return;
	for (size_t i = 0; i < gl.gl_pathc; i++) {
		json_t *p = opt_load(gl.gl_pathv[i]);
		const char *a = published ? "published" :
			json_string_value(json_object_get(p, "target"));
		const char *b = json_string_value(json_object_get(p, published ?
							"name" : "draft_quant"));
		char label[160];

		if (p && a && b && json_is_number(jx_at(p, ptr))) {
			snprintf(label, sizeof(label), "%s %s", a, b);
			json_array_append_new(pts, json_pack("{s:s,s:f,s:b}",
				"label", label, "alpha", field(p, ptr), "published",
				published));
		}
		json_decref(p);
	}
	globfree(&gl);
}

/* The drafts placed on every map: the measured W4A16 drafts of calib's
 * acceptance profiles and the published figures of calib/acceptance
 * (prof_published_load), [{"label", "alpha", "published"}], read once. */
static json_t *measured_points(const char *calib)
{
	json_t *pts = json_array();
	char pat[4096];

	snprintf(pat, sizeof(pat), "%s/accept-*w4a16*.json", calib);
	points_add(pts, pat, false);
	snprintf(pat, sizeof(pat), "%s/acceptance/*.json", calib);
	points_add(pts, pat, true);
	return pts;
}

/* Whether the cell of alpha a at row j of m holds, for a measured alpha
 * between the columns: the column at or below it (a claim that holds from
 * some alpha up holds at a measured one only from there). */
static bool holds_at(const struct cmap *m, size_t j, double a)
{
	size_t i = 0;

	while (i + 1 < m->nx && m->x[i + 1] <= a)
		i++;
	return a >= m->x[0] && m->ok[j][i];
}

/* "of the N measured W4A16 drafts (alpha A-B), K hold WHERE; of the M
 * published figures (alpha C-D), L hold" for row j of m. Static buffer,
 * overwritten by the next call. */
static const char *measured_said(const struct cmap *m, size_t j,
				 const json_t *meas, const char *where)
{
	static char out[512];
	double lo[2] = { 1, 1 }, hi[2] = { 0, 0 };
	size_t k, n[2] = { 0, 0 }, ok[2] = { 0, 0 }, at = 0;
	json_t *pt;

	json_array_foreach(meas, k, pt) {
		double a = field(pt, "/alpha");
		int w = json_is_true(json_object_get(pt, "published"));

		lo[w] = fmin(lo[w], a);
		hi[w] = fmax(hi[w], a);
		ok[w] += holds_at(m, j, a);
		n[w]++;
	}
	*out = 0;
	for (int w = 0; w < 2; w++)
		if (n[w])
			at += (size_t)snprintf(out + at, sizeof(out) - at, "%sof the "
				"%zu %s (alpha %.3f-%.3f), %s %s", at ? "; " : "",
				n[w], w ? "published figures" : "measured W4A16 drafts",
				lo[w], hi[w], ok[w] == 0 ? "none holds" : ok[w] == n[w]
				? "all hold" : "some hold", where);
	if (!at)
		snprintf(out, sizeof(out), "no drafts to place");
	return out;
}

/* The phone's draft time a token, and how far its derivation lands from
 * figures it was not fitted on: the time is between s (1 + lo) and
 * s (1 + hi) (the profile's held-out decode band; 0, 0 for a measured
 * one) */
struct phone {
	double s, lo, hi;
};

/* Whether the verdict at row j of m survives the inputs it rests on: every
 * published alpha, and where the rows are draft times (b not NULL) every
 * row the phone's held-out band spans. A sentence into out. */
static void sensitivity(const struct cmap *m, size_t j, const json_t *meas,
			const struct phone *b, const char *yunit, char *out,
			size_t n)
{
	size_t j0 = j, j1 = j, k, cells = 0, ok = 0, np = 0;
	double lo = 1, hi = 0;
	char rows[256] = "";
	json_t *pt;

	if (b) {
		j0 = cmap_nearest(m->y, m->ny, b->s * (1 + b->lo));
		j1 = cmap_nearest(m->y, m->ny, b->s * (1 + b->hi));
		if (j0 > j1) {
			size_t t = j0;

			j0 = j1;
			j1 = t;
		}
		snprintf(rows, sizeof(rows), " and the phone's draft time across "
			 "its held-out band (%.0f-%.0f ms; the swept rows nearest, "
			 "%g-%g %s%s)", 1e3 * b->s * (1 + b->lo),
			 1e3 * b->s * (1 + b->hi), m->y[j0] * m->yscale,
			 m->y[j1] * m->yscale, yunit,
			 b->s * (1 + b->hi) > m->y[m->ny - 1] ||
			 b->s * (1 + b->lo) < m->y[0] ? ", the band reaching past "
			 "the sweep" : "");
	}
	json_array_foreach(meas, k, pt) {
		double a = field(pt, "/alpha");

		if (!json_is_true(json_object_get(pt, "published")))
			continue;
		np++;
		lo = fmin(lo, a);
		hi = fmax(hi, a);
		for (size_t r = j0; r <= j1; r++) {
			cells++;
			ok += holds_at(m, r, a);
		}
	}
	if (!np) {
		snprintf(out, n, "Sensitivity: no published figure to place.");
		return;
	}
	snprintf(out, n, "Sensitivity: over the %zu published alphas (%.3f-%.3f)%s, "
		 "the claim holds in %zu of %zu cells: %s.", np, lo, hi, rows, ok,
		 cells, ok == cells ? "it holds throughout" : ok == 0 ?
		 "it holds nowhere" : "the verdict flips inside them");
}

/* The map m as evidence: a table (a row a value of y, a column an alpha;
 * "*" marks where the claim holds), the figure's data in the claim (key
 * "maps", the measured drafts placed at row j_meas), and the measured
 * drafts said where they fall. The region in words into region. */
static void map_blocks(json_t *c, json_t *blocks, const struct cmap *m,
		       const char *vfmt, const char *yhead, const char *yfmt,
		       const char *yunit, size_t j_meas, const json_t *meas,
		       const struct phone *band, char *region, size_t n)
{
	json_t *cols = json_array(), *rows, *maps = json_object_get(c, "maps");
	json_t *pts = json_array();
	char buf[64], said[1024] = "";
	size_t at = 0, k;
	json_t *pt;

	if (!maps)
		json_object_set_new(c, "maps", maps = json_array());
	json_array_append_new(cols, json_string(yhead));
	for (size_t i = 0; i < m->nx; i++) {
		snprintf(buf, sizeof(buf), "alpha %g", m->x[i]);
		json_array_append_new(cols, json_string(buf));
	}
	rows = table_of(blocks, cols);
	for (size_t j = 0; j < m->ny; j++) {
		json_t *r = row(rows);

		cell(r, yfmt, m->y[j] * m->yscale);
		for (size_t i = 0; i < m->nx; i++) {
			snprintf(buf, sizeof(buf), vfmt, m->v[j][i]);
			cell(r, "%s%s", buf, m->ok[j][i] ? " *" : "");
		}
	}
	cmap_region(m, yfmt, yunit, region, n);
	json_array_foreach(meas, k, pt) {
		double a = field(pt, "/alpha");

		json_array_append_new(pts, json_pack("{s:O,s:f,s:f}", "label",
			json_object_get(pt, "label"), "alpha", a, "y",
			m->y[j_meas] * m->yscale));
		at += (size_t)snprintf(said + at, sizeof(said) - at, "%s%s (alpha "
				       "%.3f): %s", at ? "; " : "",
				       json_string_value(json_object_get(pt, "label")),
				       a, holds_at(m, j_meas, a) ? "holds"
							       : "does not hold");
		if (at >= sizeof(said))
			at = sizeof(said) - 1; /* the text is cut, the points all go */
	}
	snprintf(buf, sizeof(buf), yfmt, m->y[j_meas] * m->yscale);
	text(blocks, "\"*\": the claim holds in the cell. It holds %s. The "
	     "drafts placed at %s %s (this project's measured W4A16 proxies, "
	     "and the published figures of results/calib/acceptance, "
	     "docs/calib.md): %s.", region, buf, yunit,
	     *said ? said : "none in the calibration folder");
	sensitivity(m, j_meas, meas, band, yunit, said, sizeof(said));
	text(blocks, "%s", said);
	json_array_append_new(maps, cmap_json(m, pts));
}

/* (a): the hidden share of each group; also as numbers, "hidden":
 * [{"alpha", "measured", "share"}], for the plot of it */
static int claim_a(json_t *claims, const struct rtt *d,
		   const struct cmap_grid *rg, const json_t *meas,
		   const struct phone *phone, struct err *e)
{
	char said[96];
	bool spans;

	static const char *const heads[] = { "acceptance",
		"sync: ms of ITL per 100 ms of RTT", "async", "hidden share",
		"hides", NULL };
	json_t *blocks, *c = claim(claims, "a", "Asynchronous drafting hides "
				   "WAN latency", &blocks), *rows;
	json_t *hidden = json_array();
	struct alpha_run run = { false, NULL };

	json_object_set_new(c, "hidden", hidden);
	if (!d->have) {
		text(blocks, "No verdict: %s is missing.", d->path);
		return 0;
	}
	spans = d->n > 0;
	for (size_t i = 0; i < d->n; i++)
		spans &= fit_spans(&d->g[i].fit[0]) &&
			 fit_spans(&d->g[i].fit[1]);
	if (!spans) {
		text(blocks, "No verdict: %s has %s (a slope over the RTT needs "
		     "two RTTs or more).", d->path, d->n ? "fewer than two RTTs "
		     "of sync or async in a group" : "no sync or async row");
		return 0;
	}
	text(blocks, "Mean ITL (ms, ± 95%% interval over the seeds) against the "
	     "round-trip time, in the paper setting:");
	if (pivot(blocks, &d->sweep, "tenants.0.wan.rtt_s", "RTT (s)",
		  "protocol.kind", "all.itl_s.mean", 1e3, "%.1f", e) < 0)
		return -1;
	text(blocks, "Sync waits out every round trip, so its ITL grows with "
	     "the RTT; async hides the WAN latency when its ITL grows by at "
	     "most %d%% of what sync's grows (hidden share = 1 - async slope / "
	     "sync slope >= %d%%, slopes by least squares over the RTTs swept). "
	     "With the measured drafts (trace acceptance, the alpha the async "
	     "run measured) and with iid acceptance at set alphas (sweep "
	     "itl-vs-rtt-alpha):", (int)(100 * (1 - TH(HIDE_SHARE))),
	     (int)(100 * TH(HIDE_SHARE)));
	if (*d->source)
		text(blocks, "The measured drafts: %s.", d->source);
	rows = table(blocks, heads);
	for (size_t i = 0; i < d->n; i++) {
		const struct rtt_group *g = &d->g[i];
		double s = g6(fit_slope(&g->fit[0]));
		double as = g6(fit_slope(&g->fit[1]));
		double share = g6(1 - fit_slope(&g->fit[1]) /
				  fit_slope(&g->fit[0]));
		bool ok = share >= TH(HIDE_SHARE);
		json_t *r = row(rows);

		group_cell(r, d, g);
		cell(r, "%.1f", 100 * s);
		cell(r, "%.1f", 100 * as);
		cell(r, "%.0f%%", 100 * share);
		cell(r, "%s", ok ? "yes" : "no");
		alpha_run_add(&run, g, ok);
		json_array_append_new(hidden, json_pack("{s:f,s:b,s:f}", "alpha",
			g->measured ? d->alpha : strtod(g->key, NULL),
			"measured", g->measured, "share", share));
	}
	if (rg->nd && rg->nr >= 2) {
		/* the hidden share over alpha x draft time, slopes over the RTTs */
		struct cmap m = { .name = "region-a", .ylabel = "draft time a token "
				  "(ms)", .vlabel = "share of the WAN latency hidden "
				  "(%)", .yname = "a draft time of", .yscale = 1e3,
				  .nx = rg->na, .ny = rg->nd };
		char region[768], v[1024];

		snprintf(m.title, sizeof(m.title), "(a) the share of the WAN "
			 "latency async hides (holds: >= %d%%)",
			 (int)(100 * TH(HIDE_SHARE)));
		memcpy(m.x, rg->alpha, sizeof(m.x));
		memcpy(m.y, rg->d, sizeof(m.y));
		for (size_t j = 0; j < rg->nd; j++)
			for (size_t i = 0; i < rg->na; i++) {
				struct fit fs = { 0 }, fa = { 0 };
				bool have = true;

				for (size_t k = 0; k < rg->nr; k++) {
					have &= cmap_have(rg, j, i, k);
					fit_add(&fs, rg->rtt[k], rg->itl[PROTO_SYNC][j][i][k]);
					fit_add(&fa, rg->rtt[k], rg->itl[PROTO_ASYNC][j][i][k]);
				}
				m.v[j][i] = have ? 100 * g6(1 - fit_slope(&fa) /
							    fit_slope(&fs)) : 0;
				m.ok[j][i] = have && m.v[j][i] >= 100 * TH(HIDE_SHARE);
			}
		text(blocks, "Where it holds: the hidden share (%%) over alpha and "
		     "the edge's draft time a token (sweep regions: one tenant, "
		     "iid alpha, a constant draft time, slopes over RTT %g-%g ms). "
		     "The drafts marked on it are this project's W4A16 profiles "
		     "(alpha is greedy agreement along a text) and the published "
		     "figures beside them, each at its pair's alpha (a 4-bit 7B "
		     "self-draft's among them; the others stand in for it):",
		     1e3 * rg->rtt[0], 1e3 * rg->rtt[rg->nr - 1]);
		map_blocks(c, blocks, &m, "%.0f", "draft time (ms)", "%g", "ms",
			   cmap_nearest(rg->d, rg->nd, phone->s),
			   meas, phone, region, sizeof(region));
		snprintf(said, sizeof(said), "at the phone's %.0f ms a draft token "
			 "(swept: %g ms)", 1e3 * phone->s,
			 1e3 * rg->d[cmap_nearest(rg->d, rg->nd, phone->s)]);
		snprintf(v, sizeof(v), "holds %s; %s", region,
			 measured_said(&m, cmap_nearest(rg->d, rg->nd, phone->s),
				       meas, said));
		verdict(c, blocks, v);
		return 0;
	}
	alpha_verdict(c, blocks, &run, d, "do not hide it");
	return 0;
}

/* ---- (b): the acceptance profiles ---- */

struct profile {
	char quant[64], file[256];
	char model[64]; /* the target's name without its ":QUANT", or "" */
	double ag, as, ppl, pd, ea4;
	double ref;     /* the alpha its model's reference has */
	bool has_ea4;
};

/* By model, then by alpha, highest first. */
static int by_model_alpha(const void *x, const void *y)
{
	const struct profile *a = x, *b = y;
	int c = strcmp(a->model, b->model);

	if (c)
		return c;
	if (a->ag != b->ag)
		return a->ag > b->ag ? -1 : 1;
	return strcmp(a->file, b->file);
}

/* Each profile's reference: the W8A16 draft of the same model if there is
 * one, else the target itself (alpha 1); one sentence a model says which. */
static void references(struct profile *p, size_t n, json_t *blocks)
{
	for (size_t i = 0; i < n;) {
		size_t j = i, ref = (size_t)-1;

		for (; j < n && !strcmp(p[j].model, p[i].model); j++)
			if (!strncmp(p[j].quant, "w8a16", 5) && ref == (size_t)-1)
				ref = j;
		for (size_t k = i; k < j; k++)
			p[k].ref = ref != (size_t)-1 ? p[ref].ag : 1;
		if (ref != (size_t)-1)
			text(blocks, "Reference%s%s: its %s draft (alpha greedy %.3f). "
			     "Threshold: a draft keeps alpha high when its alpha "
			     "greedy is at least %d%% of the reference, %.3f.",
			     *p[i].model ? " for " : "", p[i].model, p[ref].quant,
			     p[ref].ag, (int)(100 * TH(KEEP_RATIO)),
			     TH(KEEP_RATIO) * p[ref].ag);
		else
			text(blocks, "Reference%s%s: the target itself (alpha greedy "
			     "1). Threshold: a draft keeps alpha high when its alpha "
			     "greedy is at least %d%% of the reference, %.3f.",
			     *p[i].model ? " for " : "", p[i].model,
			     (int)(100 * TH(KEEP_RATIO)), TH(KEEP_RATIO));
		i = j;
	}
}


static int claim_b(json_t *claims, const char *calib, struct err *e)
{
	static const char *const heads[] = { "model", "draft", "alpha greedy",
		"/ reference", "alpha stochastic", "perplexity (target)",
		"E[A] at gamma 4", "keeps alpha high", "profile", NULL };
	json_t *blocks, *c = claim(claims, "b", "W4A16 drafting keeps "
				   "acceptance high, W4A4 does not", &blocks), *rows;
	char pattern[4096], kept[1024] = "";
	struct profile *p;
	glob_t gl;
	size_t n;
	int n16 = 0, k16bad = 0, n4 = 0, k4ok = 0;

	snprintf(pattern, sizeof(pattern), "%s/accept-*.json", calib);
	if (glob(pattern, 0, NULL, &gl) != 0) {
		text(blocks, "No verdict: no acceptance profiles in %s.", calib);
		return 0;
	}
	n = gl.gl_pathc;
	p = xcalloc(n, sizeof(*p));
	for (size_t i = 0; i < n; i++) {
		json_t *doc = jx_load(gl.gl_pathv[i], e), *ea;
		const char *base = strrchr(gl.gl_pathv[i], '/');

		if (!doc) {
			free(p);
			globfree(&gl);
			return -1;
		}
		snprintf(p[i].quant, sizeof(p[i].quant), "%s",
			 json_string_value(json_object_get(doc, "draft_quant")) ?
			 json_string_value(json_object_get(doc, "draft_quant")) : "");
		snprintf(p[i].file, sizeof(p[i].file), "%s", base ? base + 1
						       : gl.gl_pathv[i]);
		snprintf(p[i].model, sizeof(p[i].model), "%s",
			 json_string_value(json_object_get(doc, "target")) ?
			 json_string_value(json_object_get(doc, "target")) : "");
		p[i].model[strcspn(p[i].model, ":")] = '\0';
		if (jx_num(&(struct jx){ .file = gl.gl_pathv[i], .err = e }, doc,
			   "", "alpha_greedy", JX_UNIT, JX_REQUIRED,
			   &p[i].ag) < 0) {
			json_decref(doc);
			free(p);
			globfree(&gl);
			return -1;
		}
		p[i].as = field(doc, "/alpha_stochastic");
		p[i].ppl = field(doc, "/ppl");
		p[i].pd = field(doc, "/ppl_draft");
		ea = json_object_get(json_object_get(doc, "mean_accepted_per_gamma"),
				     "4");
		p[i].has_ea4 = json_is_number(ea);
		p[i].ea4 = json_number_value(ea);
		json_decref(doc);
	}
	globfree(&gl);
	qsort(p, n, sizeof(*p), by_model_alpha);
	references(p, n, blocks);
	rows = table(blocks, heads);
	for (size_t i = 0; i < n; i++) {
		bool ok = p[i].ag >= TH(KEEP_RATIO) * p[i].ref;
		json_t *r = row(rows);

		cell(r, "%s", *p[i].model ? p[i].model : "-");
		cell(r, "%s", p[i].quant);
		cell(r, "%.3f", p[i].ag);
		cell(r, "%.3f", p[i].ag / p[i].ref);
		cell(r, "%.3f", p[i].as);
		if (p[i].ppl > 0) /* a deployment's profile measures none */
			cell(r, "%.3f (%.3f, %+.1f%%)", p[i].pd, p[i].ppl,
			     100 * (p[i].pd / p[i].ppl - 1));
		else
			cell(r, "-");
		if (p[i].has_ea4)
			cell(r, "%.2f", p[i].ea4);
		else
			cell(r, "-");
		cell(r, "%s", ok ? "yes" : "no");
		cell(r, "%s", p[i].file);
		if (!strncmp(p[i].quant, "w4a16", 5)) {
			n16++;
			if (ok) {
				size_t at = strlen(kept);

				snprintf(kept + at, sizeof(kept) - at, "%s%s%s%s%s",
					 at ? ", " : "", p[i].quant,
					 *p[i].model ? " (" : "", p[i].model,
					 *p[i].model ? ")" : "");
			} else {
				k16bad++;
			}
		}
		if (!strncmp(p[i].quant, "w4a4", 4)) {
			n4++;
			k4ok += ok;
		}
	}
	free(p);
	if (!n16 || !n4) {
		verdict(c, blocks, "not decided: a W4A16 and a W4A4 profile are "
			"both needed");
	} else if (k4ok || !*kept) {
		verdict(c, blocks, "does not hold");
	} else if (k16bad) {
		char v[1200];

		snprintf(v, sizeof(v), "holds only when the W4A16 draft is %s",
			 kept);
		verdict(c, blocks, v);
	} else {
		verdict(c, blocks, "holds");
	}
	return 0;
}

/* ---- (c): continuous batching against dedicated GPUs ---- */

/* One tenant count of the batching sweep: [0] dedicated, [1] continuous */
struct batch_pt {
	double t, busy[2], gpus[2], tput[2], itl[2], ttft[2];
};

/* The batching sweep's points at band end `end` (its rows whose column
 * col[7], the device's draft band, reads so) into pt; their count */
static size_t batch_points(const struct csv *s, const int *col,
			   const char *end, struct batch_pt *pt)
{
	size_t n = 0;

	for (size_t r = 0; r < s->nrow; r++) {
		double t = cnum(s, r, col[0]);
		int k = !strcmp(csv_str(s, r, col[1]), "continuous");
		size_t i = 0;

		if (strcmp(csv_str(s, r, col[7]), end))
			continue;
		while (i < n && pt[i].t != t)
			i++;
		if (i == n) {
			HS_ASSERT(n < MAX_POINTS);
			pt[n++].t = t;
		}
		pt[i].busy[k] = cnum(s, r, col[2]);
		pt[i].gpus[k] = cnum(s, r, col[3]);
		pt[i].tput[k] = cnum(s, r, col[4]) / pt[i].gpus[k];
		pt[i].itl[k] = cnum(s, r, col[5]) * 1e3;
		pt[i].ttft[k] = cnum(s, r, col[6]);
	}
	return n;
}

/* Whether batching keeps the GPU busy at point p (the threshold) */
static bool batch_ok(const struct batch_pt *p)
{
	return p->tput[1] / p->tput[0] >= TH(BATCH_SHARE) * p->t &&
	       p->itl[1] <= (1 + TH(ITL_COST)) * p->itl[0] &&
	       p->ttft[1] <= (1 + TH(ITL_COST)) * p->ttft[0];
}

/* The verdict over the n points: "holds", "holds only when the tenants are
 * at most N" (the last count before the first that fails), ..., or "was
 * not swept" (none) */
static void batch_said(const struct batch_pt *pt, size_t n, char *out,
		       size_t len)
{
	int good = 0, bad = 0;
	double last = 0;

	for (size_t i = 0; i < n; i++) {
		bool ok = batch_ok(&pt[i]);

		if (pt[i].t == 1)
			continue;
		if (ok && !bad)
			last = pt[i].t;
		good += ok;
		bad += !ok;
	}
	if (!n)
		snprintf(out, len, "was not swept");
	else if (!bad)
		snprintf(out, len, "holds");
	else if (last)
		snprintf(out, len, "holds only when the tenants are at most %g",
			 last);
	else
		snprintf(out, len, "%s", good ? "holds only at some tenant counts "
			 "(see the table)" : "does not hold");
}

static int claim_c(json_t *claims, const char *dir, struct err *e)
{
	static const char *const names[] = { "tenants.0.count", "cloud.policy",
		"cloud.busy_fraction_mean", "cloud.gpus_mean",
		"all.tokens_per_s_mean", "all.itl_s.mean_mean",
		"all.ttft_s.p99_mean", "tenants.0.device.draft_band", NULL };
	static const char *const heads[] = { "tenants", "GPU busy, dedicated",
		"continuous", "tokens/s per GPU, dedicated", "continuous",
		"ratio / N", "ITL (ms), dedicated", "continuous",
		"TTFT p99 (s), dedicated", "continuous", "keeps busy", NULL };
	struct batch_pt pt[MAX_POINTS], at[MAX_POINTS];
	json_t *blocks, *c = claim(claims, "c", "Multi-tenant batching keeps "
				   "the GPU busy", &blocks), *rows;
	struct csv s = { 0 };
	int col[8], rc;
	size_t n;
	char v[128], ends[2][128];

	if ((rc = load_sweep(&s, dir, "batching", blocks, true, e)) <= 0)
		return rc;
	if (cols(&s, names, col, e) < 0) {
		csv_release(&s);
		return -1;
	}
	n = batch_points(&s, col, band_ends[0], pt);
	for (int k = 1; k < NBAND_ENDS; k++)
		batch_said(at, batch_points(&s, col, band_ends[k], at),
			   ends[k - 1], sizeof(ends[k - 1]));
	csv_release(&s);
	text(blocks, "Dedicated: a GPU per tenant; continuous: every tenant on "
	     "%d shared GPU, batched per iteration (Orca). Threshold: batching "
	     "keeps the GPU busy at N tenants when the shared GPU commits at "
	     "least %d%% of N times the tokens/s of a dedicated GPU, with a mean "
	     "ITL and a p99 TTFT each at most %d%% above dedicated's.",
	     n ? (int)pt[0].gpus[1] : 0, (int)(100 * TH(BATCH_SHARE)),
	     (int)(100 * TH(ITL_COST)));
	rows = table(blocks, heads);
	for (size_t i = 0; i < n; i++) {
		double t = pt[i].t;
		json_t *r = row(rows);

		cell(r, "%d", (int)t);
		cell(r, "%.2f%%", 100 * pt[i].busy[0]);
		cell(r, "%.2f%%", 100 * pt[i].busy[1]);
		cell(r, "%.2f", pt[i].tput[0]);
		cell(r, "%.2f", pt[i].tput[1]);
		cell(r, "%.2f", pt[i].tput[1] / pt[i].tput[0] / t);
		cell(r, "%.1f", pt[i].itl[0]);
		cell(r, "%.1f", pt[i].itl[1]);
		cell(r, "%.1f", pt[i].ttft[0]);
		cell(r, "%.1f", pt[i].ttft[1]);
		cell(r, "%s", t > 1 ? (batch_ok(&pt[i]) ? "yes" : "no") : "-");
	}
	batch_said(pt, n, v, sizeof(v));
	text(blocks, "Sensitivity: with the phone's draft and prefill at the "
	     "fast ends of their held-out bands (device/draft_band and "
	     "device/prefill_band \"low\"), it %s; at the slow ends "
	     "(\"high\"), it %s: %s.", ends[0], ends[1],
	     !strcmp(ends[0], v) && !strcmp(ends[1], v) ? "the verdict holds "
	     "across the bands" : "the verdict moves inside the bands");
	verdict(c, blocks, v);
	return 0;
}

/* ---- (d): queueing past capacity, a stationary queue ---- */

/* The mean wait for a KV-cache slot that the formulas predict at lambda
 * requests a second, c slots and a life of L: a request that waits W does
 * so while its device prefills and then holds its slot L - W, so W is the
 * fixed point W = M/D/c wait(c, lambda, L - W) (Allen and Cunneen's), found
 * by bisection on W in (max(0, L - c / lambda), L), where the right side
 * falls from infinity to 0. It is small below the onset c / L and tends to
 * L - c / lambda above it; past the capacity, no bound (INFINITY). */
static double kv_wait_s(double lambda, double c, double life, double cap)
{
	double lo = fmax(0, life - c / lambda), hi = life;

	if (lambda >= cap)
		return INFINITY;
	for (int k = 0; k < 200 && hi - lo > 1e-9 * life; k++) {
		double w = (lo + hi) / 2;

		if (fm_mdc_wait_s((int)c, lambda, life - w) > w)
			lo = w;
		else
			hi = w;
	}
	return (lo + hi) / 2;
}

static int claim_d(json_t *claims, const char *dir, struct err *e)
{
	static const char *const names[] = { "tenants.0.workload.rate_per_s",
		"all.tokens_per_s_mean", "cloud.admission_wait_s.mean_mean",
		"cloud.admission_wait_s.mean_ci95", "all.itl_s.mean_mean",
		"all.ttft_s.p50_mean", "cloud.busy_fraction_mean", NULL };
	static const char *const heads[] = { "offered load", "offered (req/s)",
		"delivered (req/s)", "mean wait for the KV cache (s)",
		"predicted (s)", "mean ITL (ms)", "TTFT p50 (s)", "GPU busy", NULL };
	json_t *blocks, *c = claim(claims, "d", "Queueing delay grows without "
				   "bound beyond capacity", &blocks), *rows;
	json_t *queue = json_array(), *sw;
	struct csv q = { 0 };
	char path[4096], bound[32] = "";
	bool have = true;
	double cap = num_at(dir, "formulas.json", "/capacity_requests_per_s",
			    &have);
	double slots = num_at(dir, "formulas.json", "/kv_slots", &have);
	double life = num_at(dir, "formulas.json", "/request_lifetime_s", &have);
	double onset = num_at(dir, "formulas.json",
			      "/kv_wait_onset_requests_per_s", &have);
	double n = 0, out = 0, plateau = 0, w_one = 0, w_top = 0, itl_lo = 0;
	double itl_hi = 0, load_top = 0, err_max = 0;
	int col[8], rc;
	bool knee_ok, grows, flat;
	char v[512];

	json_object_set_new(c, "queue", queue);
	if ((rc = load_sweep(&q, dir, "queueing", blocks, true, e)) <= 0)
		return rc;
	snprintf(path, sizeof(path), "%s/formulas.json", dir);
	if ((sw = opt_load(path))) {
		const char *b = json_string_value(json_object_get(sw,
							  "capacity_bound"));

		snprintf(bound, sizeof(bound), "%s", b ? b : "");
		json_decref(sw);
	}
	snprintf(path, sizeof(path), "%s/sweeps/queueing/sweep.json", dir);
	if ((sw = opt_load(path))) {
		n = field(sw, "/set/~1tenants~10~1count");
		out = field(sw, "/set/~1tenants~10~1workload/output_tokens");
		json_decref(sw);
	}
	if (!have || !(n > 0) || !(out > 0) || !(cap > 0)) {
		text(blocks, "No verdict: formulas.json's request capacity or the "
		     "queueing sweep's tenant count and output length are missing.");
		csv_release(&q);
		return 0;
	}
	if (cols(&q, names, col, e) < 0 || q.nrow == 0) {
		if (q.nrow == 0)
			err_set(e, "%s: no rows", q.file);
		csv_release(&q);
		return -1;
	}
	text(blocks, "A stationary queue: the paper's async setting under open-"
	     "loop Poisson arrivals from %.0f phones, the offered load swept "
	     "from %.1f to %.1f times the capacity `hybridspec formulas` gives, "
	     "%.3f requests a second (bound by the %s). Each run is 3,000 s; the "
	     "first 1,000 s are a warm-up, left out of every statistic (what is "
	     "measured: requests finished after it, with all their tokens, the "
	     "ITL gaps and GPU iterations and admissions after it). The cache holds %.0f requests (paged: "
	     "its tokens over a request's mean holding, its prompt and half its "
	     "output); a request "
	     "admitted at once holds its slot %.1f s, so requests start to wait "
	     "at %.3f a second; one that waits does so while its phone "
	     "prefills, and holds its slot the less, so the wait settles where "
	     "an M/D/c queue of service L - W waits W (about L - c / lambda "
	     "above the onset) until the capacity, and grows without bound past "
	     "it. Threshold: the claim holds when the "
	     "delivered rate levels off within %d%% of the formulas' capacity, "
	     "the wait at the highest load is at least %gx the wait at the "
	     "capacity, and ITL does not fall as the load rises. (The experiment "
	     "this replaces gave every tenant one request at once: a burst that "
	     "drains, whose last requests found the GPU emptier, which is why "
	     "its mean ITL fell as tenants were added; it measured the drain, "
	     "not a steady state.)", n,
	     cnum(&q, 0, col[0]) * n / cap,
	     cnum(&q, q.nrow - 1, col[0]) * n / cap, cap,
	     bound, slots, life, onset,
	     (int)(100 * TH(KNEE_CLOSE)), TH(BLOWUP));
	rows = table(blocks, heads);
	for (size_t r = 0; r < q.nrow; r++) {
		double lam = cnum(&q, r, col[0]) * n, load = lam / cap;
		double got = cnum(&q, r, col[1]) / out, w = cnum(&q, r, col[2]);
		double pred = kv_wait_s(lam, slots, life, cap);
		json_t *rw = row(rows);

		cell(rw, "%.2f", load);
		cell(rw, "%.3f", lam);
		cell(rw, "%.3f", got);
		cell(rw, "%.2f ± %.2f", w, cnum(&q, r, col[3]));
		if (isfinite(pred))
			cell(rw, "%.2f", pred);
		else
			cell(rw, "%s", "grows");
		cell(rw, "%.1f", 1e3 * cnum(&q, r, col[4]));
		cell(rw, "%.1f", cnum(&q, r, col[5]));
		cell(rw, "%.1f%%", 100 * cnum(&q, r, col[6]));
		json_array_append_new(queue, json_pack("{s:f,s:f,s:f,s:f}", "load",
			load, "delivered", got / cap, "wait_s", w, "predicted_s",
			isfinite(pred) ? pred : -1));
		if (load >= 1 - 1e-9)
			plateau = fmax(plateau, got);
		if (fabs(load - 1) < 1e-6)
			w_one = w;
		if (isfinite(pred) && pred > 1 && load >= 0.4 - 1e-9)
			err_max = fmax(err_max, fabs(w / pred - 1));
		if (r == 0)
			itl_lo = cnum(&q, r, col[4]);
		itl_hi = cnum(&q, r, col[4]);
		w_top = w;
		load_top = load;
	}
	text(blocks, "Predicted: the wait W at which an M/D/c queue of %.0f slots, "
	     "each held L - W, waits W (small below %.3f requests a second, "
	     "about L - c / lambda above); the measured mean is within %.0f%% "
	     "of it where the prediction exceeds a second (loads from 0.4). "
	     "Past the capacity the wait depends on how long the run is (the "
	     "queue never empties), so no figure is predicted.", slots, onset,
	     100 * err_max);
	knee_ok = plateau > 0 && fabs(g6(plateau / cap) - 1) <= TH(KNEE_CLOSE);
	grows = w_one > 0 && w_top >= TH(BLOWUP) * w_one;
	flat = itl_hi >= 0.99 * itl_lo;
	snprintf(v, sizeof(v), "%s: the delivered rate levels off at %.3f "
		 "requests a second, %.1f%% of the formulas' capacity; the mean "
		 "wait for the cache is %.0f s at the capacity and %.0f s at %.2fx "
		 "it%s", knee_ok && grows && flat ? "holds" : "does not hold",
		 plateau, 100 * plateau / cap, w_one, w_top, load_top,
		 flat ? "" : "; the mean ITL falls as the load rises");
	verdict(c, blocks, v);
	csv_release(&q);
	return 0;
}

/* ---- (e): async ITL against the edge's draft time ---- */

static int claim_e(json_t *claims, const char *dir, const struct rtt *d,
		   const struct cmap_grid *rg, const json_t *meas,
		   const struct phone *phone)
{
	static const char *const heads[] = { "acceptance", "RTTs (ms)",
		"async ITL (ms), lowest", "highest", "highest / draft time",
		"close", NULL };
	json_t *blocks, *c = claim(claims, "e", "Inter-token latency close to "
				   "the edge's drafting speed", &blocks), *rows;
	bool have = true;
	double td = num_at(dir, "formulas.json", "/t_draft_s", &have);
	double eo = num_at(dir, "runs/edge_only/summary.json", "/all/itl_s/mean",
			   &have);
	double as = num_at(dir, "runs/async/summary.json", "/all/itl_s/mean",
			   &have);
	struct alpha_run run = { false, NULL };

	if (!have) {
		text(blocks, "No verdict: formulas.json or the edge_only and async "
		     "runs are missing.");
		return 0;
	}
	if (!d->have || d->n == 0) {
		text(blocks, "No verdict: %s %s.", d->path, d->have ?
		     "has no sync or async row" : "is missing");
		return 0;
	}
	text(blocks, "The edge drafts a token in %.1f ms (its profile, at the "
	     "mean context); edge-only serving gives a mean ITL of %.1f ms, "
	     "async speculative decoding %.1f ms in the paper setting: %.2fx the "
	     "draft time, %.2fx edge-only. Threshold: async ITL is close to the "
	     "drafting speed when it is at most %d%% above the draft time (%.1f "
	     "ms) at every RTT swept. Mean async ITL over the RTTs of the sweeps "
	     "itl-vs-rtt and itl-vs-rtt-alpha:", 1e3 * td, 1e3 * eo, 1e3 * as,
	     as / td, as / eo, (int)(100 * TH(CLOSE)),
	     1e3 * td * (1 + TH(CLOSE)));
	rows = table(blocks, heads);
	for (size_t i = 0; i < d->n; i++) {
		const struct rtt_group *g = &d->g[i];
		bool ok = g->hi <= (1 + TH(CLOSE)) * td;
		json_t *r = row(rows);

		group_cell(r, d, g);
		cell(r, "%s", g->rtts);
		cell(r, "%.1f", 1e3 * g->lo);
		cell(r, "%.1f", 1e3 * g->hi);
		cell(r, "%.2f", g->hi / td);
		cell(r, "%s", ok ? "yes" : "no");
		alpha_run_add(&run, g, ok);
	}
	if (rg->nd && rg->nr) {
		/* async ITL over the draft time, over alpha x RTT at the phone's
		 * draft time and over alpha x draft time at the paper's RTT */
		size_t jd = cmap_nearest(rg->d, rg->nd, phone->s);
		size_t jr = cmap_nearest(rg->rtt, rg->nr, 0.075);
		struct cmap m = { .name = "region-e-rtt", .ylabel = "RTT (ms)",
				  .vlabel = "async ITL / draft time", .yname = "RTT",
				  .yscale = 1e3, .nx = rg->na, .ny = rg->nr };
		struct cmap m2 = { .name = "region-e-draft", .ylabel = "draft time "
				   "a token (ms)", .vlabel = "async ITL / draft time",
				   .yname = "a draft time of", .yscale = 1e3,
				   .nx = rg->na, .ny = rg->nd };
		char r1[768], r2[768], v[2048];

		snprintf(m.title, sizeof(m.title), "(e) async ITL over the draft "
			 "time, a %g ms draft (holds: <= %.2f)", 1e3 * rg->d[jd],
			 1 + TH(CLOSE));
		snprintf(m2.title, sizeof(m2.title), "(e) async ITL over the draft "
			 "time, RTT %g ms (holds: <= %.2f)", 1e3 * rg->rtt[jr],
			 1 + TH(CLOSE));
		memcpy(m.x, rg->alpha, sizeof(m.x));
		memcpy(m.y, rg->rtt, sizeof(m.y));
		memcpy(m2.x, rg->alpha, sizeof(m2.x));
		memcpy(m2.y, rg->d, sizeof(m2.y));
		for (size_t i = 0; i < rg->na; i++) {
			for (size_t k = 0; k < rg->nr; k++) {
				m.v[k][i] = g6(rg->itl[PROTO_ASYNC][jd][i][k] / rg->d[jd]);
				m.ok[k][i] = cmap_have(rg, jd, i, k) &&
					     m.v[k][i] <= 1 + TH(CLOSE);
			}
			for (size_t j = 0; j < rg->nd; j++) {
				m2.v[j][i] = g6(rg->itl[PROTO_ASYNC][j][i][jr] / rg->d[j]);
				m2.ok[j][i] = cmap_have(rg, j, i, jr) &&
					      m2.v[j][i] <= 1 + TH(CLOSE);
			}
		}
		text(blocks, "Where it holds: async's mean ITL over the draft time "
		     "(sweep regions: one tenant, iid alpha, a constant draft "
		     "time), over alpha and the RTT with a %g ms draft:",
		     1e3 * rg->d[jd]);
		map_blocks(c, blocks, &m, "%.2f", "RTT (ms)", "%g", "ms", jr,
			   meas, NULL, r1, sizeof(r1));
		text(blocks, "And over alpha and the draft time at RTT %g ms:",
		     1e3 * rg->rtt[jr]);
		map_blocks(c, blocks, &m2, "%.2f", "draft time (ms)", "%g", "ms",
			   jd, meas, phone, r2, sizeof(r2));
		snprintf(v, sizeof(v), "with a %g ms draft, holds %s; at RTT %g ms, "
			 "holds %s; %s", 1e3 * rg->d[jd], r1, 1e3 * rg->rtt[jr], r2,
			 measured_said(&m, jr, meas, "with the phone's draft at "
				       "the paper's RTT"));
		verdict(c, blocks, v);
		return 0;
	}
	alpha_verdict(c, blocks, &run, d, "are not close");
	return 0;
}

/* ---- (f): cloud-side speculation, the baseline to beat ---- */

/* The devices and targets of the cloud-spec sweeps, and the edge
 * protocols against cloud_spec. */
#define F_DEVICES 4
#define F_TARGETS 8
#define F_PROTOS 4
static const char *const f_protos[F_PROTOS] = { "sync", "async", "cloud_spec",
						"cloud_only" };

struct f_keys {
	const char *dev[F_DEVICES], *model[F_TARGETS], *tp[F_TARGETS];
	size_t nd, nt;
};

/* A device's label: its profile's file name without "edge-" and the
 * model and format after the device. */
static void dev_label(const char *profile, char *out, size_t n)
{
	const char *b = strrchr(profile, '/') ? strrchr(profile, '/') + 1 : profile;
	const char *end = strstr(b, "-llama2");

	if (!strncmp(b, "edge-", 5))
		b += 5;
	snprintf(out, n, "%.*s", end ? (int)(end - b) : (int)strlen(b), b);
}

static void key_index(const char **v, size_t *n, size_t cap, const char *s)
{
	size_t i = 0;

	while (i < *n && strcmp(v[i], s))
		i++;
	if (i == *n && *n < cap)
		v[(*n)++] = s;
}

/* Clients per GPU for one (device, target, protocol) of the capacity
 * sweep: the tenant count where SLO attainment falls through the
 * threshold, interpolated in log N between the last count that meets it
 * and the next; 0 when the fewest fail, -1 when even the most pass. */
static double clients_at(const struct csv *c, const int *col, const char *dev,
			 const char *model, const char *tp, const char *proto)
{
	double lo_n = 0, lo_a = 0;

	for (size_t r = 0; r < c->nrow; r++) {
		double n = cnum(c, r, col[3]), a = cnum(c, r, col[4]);

		if (strcmp(csv_str(c, r, col[0]), dev) ||
		    strcmp(csv_str(c, r, col[1]), model) ||
		    strcmp(csv_str(c, r, col[2]), tp) ||
		    strcmp(csv_str(c, r, col[5]), proto))
			continue;
		if (a >= TH(ATTAIN)) {
			lo_n = n;
			lo_a = a;
			continue;
		}
		if (lo_n == 0)
			return 0;
		return lo_n * pow(n / lo_n, (lo_a - TH(ATTAIN)) / (lo_a - a));
	}
	return lo_n > 0 ? -1 : 0;
}

static int claim_f(json_t *claims, const char *dir,
		   const struct cmap_grid *rg, const json_t *meas, struct err *e)
{
	static const char *const inames[] = { "tenants.0.device.profile",
		"cloud.model", "cloud.tp", "tenants.0.acceptance.alpha",
		"tenants.0.wan.rtt_s", "protocol.kind", "all.tpot_s_mean", NULL };
	static const char *const cnames[] = { "tenants.0.device.profile",
		"cloud.model", "cloud.tp", "tenants.0.count",
		"all.slo_attainment_mean", "protocol.kind", NULL };
	static const char *const lheads[] = { "device", "target", "points",
		"edge faster than cloud_spec", "best edge / cloud_spec TPOT",
		"at alpha, RTT (ms)", "cloud_spec TPOT there (ms)",
		"cloud_only (ms)", NULL };
	static const char *const cheads[] = { "device", "target", "sync",
		"async", "cloud_spec", "cloud_only", "edge / cloud_spec",
		"1 + gamma t_d / t_v", "within 25%", NULL };
	json_t *blocks, *c = claim(claims, "f", "Cloud-side speculative decoding "
				   "is the baseline edge drafting must beat "
				   "(arXiv 2606.25091)", &blocks), *rows;
	struct csv l = { 0 }, k = { 0 };
	struct f_keys keys = { 0 };
	int lc[8], kc[8], rl, rk;
	size_t wins = 0, points = 0, cap_rows = 0, cap_ok = 0, no_edge = 0;
	size_t map_wins = 0, map_points = 0;
	double best_ratio = 0, most = 0;
	bool beyond = false;
	char v[512];

	if ((rl = load_sweep(&l, dir, "cloud-spec-itl", blocks, true, e)) <= 0)
		return rl;
	if ((rk = load_sweep(&k, dir, "cloud-spec-capacity", blocks, true, e)) <= 0) {
		csv_release(&l);
		return rk;
	}
	if (cols(&l, inames, lc, e) < 0 || cols(&k, cnames, kc, e) < 0) {
		csv_release(&l);
		csv_release(&k);
		return -1;
	}
	for (size_t r = 0; r < l.nrow; r++) {
		size_t t = 0;

		key_index(keys.dev, &keys.nd, F_DEVICES, csv_str(&l, r, lc[0]));
		while (t < keys.nt && (strcmp(keys.model[t], csv_str(&l, r, lc[1])) ||
				       strcmp(keys.tp[t], csv_str(&l, r, lc[2]))))
			t++;
		if (t == keys.nt && keys.nt < F_TARGETS) {
			keys.model[t] = csv_str(&l, r, lc[1]);
			keys.tp[t] = csv_str(&l, r, lc[2]);
			keys.nt++;
		}
	}
	for (size_t r = 0; r < k.nrow; r++)
		most = fmax(most, cnum(&k, r, kc[3]));
	text(blocks, "The alternative to drafting on the edge is speculation run "
	     "wholly in the cloud (cloud_spec, docs/protocols.md): the cloud "
	     "drafts with its own copy of the draft (the device's model in "
	     "W4A16) and verifies, and streams each verdict's tokens down. "
	     "arXiv 2606.25091 argues that at WAN round trips edge drafting "
	     "cannot beat it on latency, and that edge drafting's gain is "
	     "capacity: a saturated server carries about 1 + gamma t_d / t_v "
	     "times more clients (t_d a draft step in the cloud, t_v a "
	     "verification). Latency: one client alone, iid alpha and RTT swept "
	     "(sweep cloud-spec-itl), mean TPOT of the edge's best protocol "
	     "(sync or async) against cloud_spec's at each point:");
	rows = table(blocks, lheads);
	for (size_t di = 0; di < keys.nd; di++) {
		for (size_t ti = 0; ti < keys.nt; ti++) {
			double best = INFINITY, cs_at = 0, co_at = 0;
			size_t n = 0, w = 0;
			char where[64] = "", dl[64];
			json_t *rw;

			for (size_t r = 0; r < l.nrow; r++) {
				double edge = INFINITY, cs = 0, co = 0;

				if (strcmp(csv_str(&l, r, lc[5]), "sync") ||
				    strcmp(csv_str(&l, r, lc[0]), keys.dev[di]) ||
				    strcmp(csv_str(&l, r, lc[1]), keys.model[ti]) ||
				    strcmp(csv_str(&l, r, lc[2]), keys.tp[ti]))
					continue;
				/* the point's other protocols: the rows equal to it
				 * but for the protocol */
				for (size_t q = 0; q < l.nrow; q++) {
					const char *p = csv_str(&l, q, lc[5]);
					double x = cnum(&l, q, lc[6]);
					bool same = true;

					for (int j = 0; j < 5; j++)
						same &= !strcmp(csv_str(&l, q, lc[j]),
								csv_str(&l, r, lc[j]));
					if (!same)
						continue;
					if (!strcmp(p, "cloud_spec"))
						cs = x;
					else if (!strcmp(p, "cloud_only"))
						co = x;
					else if (x < edge)
						edge = x;
				}
				if (!(cs > 0))
					continue;
				n++;
				w += edge < cs;
				if (edge / cs < best) {
					best = edge / cs;
					cs_at = cs;
					co_at = co;
					snprintf(where, sizeof(where), "%s, %.0f",
						 csv_str(&l, r, lc[3]),
						 1e3 * cnum(&l, r, lc[4]));
				}
			}
			if (!n)
				continue;
			points += n;
			wins += w;
			dev_label(keys.dev[di], dl, sizeof(dl));
			rw = row(rows);
			cell(rw, "%s", dl);
			cell(rw, "%s tp %s", keys.model[ti], keys.tp[ti]);
			cell(rw, "%zu", n);
			cell(rw, "%zu", w);
			cell(rw, "%.2f", best);
			cell(rw, "%s", where);
			cell(rw, "%.1f", 1e3 * cs_at);
			cell(rw, "%.1f", 1e3 * co_at);
		}
	}
	if (rg->nd && rg->nr) {
		/* the edge's best over cloud_spec's ITL at the fastest draft */
		struct cmap m = { .name = "region-f", .ylabel = "RTT (ms)",
				  .vlabel = "best edge ITL / cloud_spec ITL",
				  .yname = "RTT", .yscale = 1e3, .nx = rg->na,
				  .ny = rg->nr };
		char region[768];

		snprintf(m.title, sizeof(m.title), "(f) best edge ITL over "
			 "cloud_spec ITL, a %g ms draft (edge faster: < 1)",
			 1e3 * rg->d[0]);
		memcpy(m.x, rg->alpha, sizeof(m.x));
		memcpy(m.y, rg->rtt, sizeof(m.y));
		for (size_t i = 0; i < rg->na; i++)
			for (size_t t = 0; t < rg->nr; t++) {
				double edge = fmin(rg->itl[PROTO_SYNC][0][i][t],
						   rg->itl[PROTO_ASYNC][0][i][t]);

				bool have = cmap_have(rg, 0, i, t);

				m.v[t][i] = have ? g6(edge /
						      rg->itl[PROTO_CLOUD_SPEC][0][i][t]) : 0;
				m.ok[t][i] = have && m.v[t][i] < 1;
				map_wins += m.ok[t][i];
				map_points++;
			}
		text(blocks, "Over alpha and the RTT with the fastest draft swept "
		     "(sweep regions: %g ms a token, a constant, one tenant), the "
		     "edge's best mean ITL over cloud_spec's:", 1e3 * rg->d[0]);
		map_blocks(c, blocks, &m, "%.2f", "RTT (ms)", "%g", "ms",
			   cmap_nearest(rg->rtt, rg->nr, 0.075),
			   meas, NULL, region, sizeof(region));
	}
	text(blocks, "Capacity: clients per GPU (the tenant count at which fewer "
	     "than %d%% of requests meet the SLO of configs/cloud/base.json, "
	     "interpolated in log N between the counts swept, divided by the "
	     "GPUs of a replica; sweep cloud-spec-capacity), against the claim's "
	     "ratio from `hybridspec formulas` at a full batch's costs "
	     "(formulas-cloud-MODEL-tpN.json; cloud_spec runs its draft steps "
	     "in lockstep, as vLLM does). A cell is empty where the fewest "
	     "tenants swept already miss the SLO (footnote a) and reads \">\" "
	     "where the most still meet it. An admitted request holds the KV "
	     "blocks of its prompt and of its output so far until it ends, so "
	     "requests that last longer (the edge's, at the device's drafting "
	     "speed) let fewer clients through a GPU where the cache, not GPU "
	     "time, is what runs out; the claim's ratio counts GPU time only.",
	     (int)(100 * TH(ATTAIN)));
	rows = table(blocks, cheads);
	for (size_t di = 0; di < keys.nd; di++) {
		for (size_t ti = 0; ti < keys.nt; ti++) {
			double cl[F_PROTOS], gpus = atof(keys.tp[ti]), edge, pred;
			char fpath[256], dl[64];
			bool have = true, ok;
			json_t *rw = row(rows);

			dev_label(keys.dev[di], dl, sizeof(dl));
			cell(rw, "%s", dl);
			cell(rw, "%s tp %s", keys.model[ti], keys.tp[ti]);
			for (int p = 0; p < F_PROTOS; p++) {
				cl[p] = clients_at(&k, kc, keys.dev[di],
						   keys.model[ti], keys.tp[ti],
						   f_protos[p]);
				if (cl[p] == 0)
					cell(rw, "%s", "(a)");
				else if (cl[p] < 0)
					cell(rw, "> %.0f", most / gpus);
				else
					cell(rw, "%.0f", cl[p] / gpus);
			}
			snprintf(fpath, sizeof(fpath), "formulas-cloud-%s-tp%s.json",
				 keys.model[ti], keys.tp[ti]);
			pred = num_at(dir, fpath, "/cloud_spec_capacity_ratio",
				      &have);
			/* -1: every count swept meets the SLO, a bound not a value */
			edge = cl[0] < 0 || cl[1] < 0 ? -1 : fmax(cl[0], cl[1]);
			if (edge <= 0 || cl[2] <= 0) {
				no_edge += edge == 0;
				beyond |= edge < 0 || cl[2] < 0;
				cell(rw, "%s", "");
			} else {
				cap_rows++;
				best_ratio = fmax(best_ratio, edge / cl[2]);
				cell(rw, "%.2f", edge / cl[2]);
			}
			if (have)
				cell(rw, "%.2f", pred);
			else
				cell(rw, "%s", "");
			if (edge <= 0 || cl[2] <= 0) {
				cell(rw, "%s", "");
				continue;
			}
			ok = have && fabs(g6(edge / cl[2]) / pred - 1) <= TH(CAP_CLOSE);
			cap_ok += ok;
			cell(rw, "%s", ok ? "yes" : "no");
		}
	}
	text(blocks, "(a) even the fewest tenants swept miss the SLO: with this "
	     "device the edge's own drafting makes the TPOT SLO unreachable.%s",
	     beyond ? " An empty ratio beside a \">\" cell: a protocol meets the "
	     "SLO at every count swept, so its capacity is not known." : "");
	snprintf(v, sizeof(v), "%s on latency: edge drafting is faster than "
		 "cloud_spec at %zu of %zu points of cloud-spec-itl and %zu of %zu "
		 "of the regions map; %s on capacity: %s",
		 wins + map_wins ? "does not hold" : "holds", wins, points,
		 map_wins, map_points,
		 cap_ok == cap_rows && cap_rows ? "holds" : "does not hold",
		 cap_rows == 0 ? "no device meets the SLO by drafting" : "");
	if (cap_rows) {
		size_t at = strlen(v);

		snprintf(v + at, sizeof(v) - at, "the ratio is within %d%% of 1 + "
			 "gamma t_d / t_v in %zu of %zu cases, edge drafting "
			 "carrying at most %.2fx cloud_spec's clients per GPU%s",
			 (int)(100 * TH(CAP_CLOSE)), cap_ok, cap_rows, best_ratio,
			 no_edge ? ", and with the phone not at all" : "");
	}
	verdict(c, blocks, v);
	csv_release(&l);
	csv_release(&k);
	return 0;
}

/* ---- what backs no single claim ---- */

/* The TTFT of the edge protocols, and where it comes from: the device's
 * own prefill of the prompt, from its profile (said derived or measured). */
static void ttft_source(json_t *blocks, const char *dir)
{
	char path[4096];
	json_t *conf, *prof = NULL;
	const char *file, *gpu, *dev, *on, *from;
	double per, prompt, figs;

	snprintf(path, sizeof(path), "%s/runs/sync/config.resolved.json", dir);
	if (!(conf = opt_load(path)))
		return;
	file = json_string_value(jx_at(conf, "/tenants/0/device/profile"));
	gpu = json_string_value(jx_at(conf, "/cloud/gpu/name"));
	per = field(conf, "/tenants/0/device/prefill_per_token_s");
	prompt = field(conf, "/tenants/0/workload/prompt_tokens");
	if (file)
		prof = opt_load(file);
	dev = prof ? json_string_value(json_object_get(prof, "device")) : NULL;
	on = prof ? json_string_value(jx_at(prof,
		"/derivation/device_model/prefill_fitted_on")) : NULL;
	from = prof ? json_string_value(jx_at(prof,
		"/derivation/held_out/prefill/from")) : NULL;
	figs = prof ? field(prof, "/derivation/held_out/prefill/figures") : 0;
	if (prof && json_is_true(json_object_get(prof, "derived")))
		text(blocks, "Where the edge protocols' TTFT comes from: the device "
		     "prefills the prompt itself before it drafts, %.0f tokens at "
		     "%.1f ms a token, %.1f s. That rate is the %s profile's, "
		     "derived, not measured: the device model fitted on published "
		     "llama.cpp CPU figures (on %s) predicts %.1f tokens/s over 512 "
		     "tokens; its held-out error (predicted over published "
		     "tokens/s, less 1, on %.0f figure%s; %s) runs from %+.0f%% to "
		     "%+.0f%% (calib derive; docs/calib.md). cloud_only's and "
		     "cloud_spec's TTFT is the %s's prefill.", prompt, 1e3 * per,
		     prompt * per, dev ? dev : "device", on ? on : "the library",
		     field(prof, "/derivation/predicted/prefill_tokens_per_s"),
		     figs, figs == 1 ? "" : "s", from ? from : "held out",
		     100 * field(prof, "/derivation/held_out/prefill/lowest"),
		     100 * field(prof, "/derivation/held_out/prefill/highest"),
		     gpu ? gpu : "GPU");
	else if (prof)
		text(blocks, "Where the edge protocols' TTFT comes from: the device "
		     "prefills the prompt itself before it drafts, %.0f tokens at "
		     "%.1f ms a token (its measured profile, %s), %.1f s.", prompt,
		     1e3 * per, file, prompt * per);
	json_decref(prof);
	json_decref(conf);
}

/* How far the costs are from published serving figures (gpu check). */
static void gpu_check(json_t *blocks, json_t *doc)
{
	text(blocks, "Against %.0f published end-to-end serving figures that "
	     "nothing here was fitted to (`gpu check`, docs/gpu-costs.md), "
	     "the same costs predict decode figures within %.1f%% (median) "
	     "and %.1f%% (worst) and prefill figures within %.1f%% and %.1f%%; "
	     "the goals (10%% and 25%%, worst 35%%) are %s; by source, and "
	     "why the misses miss: docs/gpu-costs.md.",
	     field(doc, "/summary/decode/points") +
		     field(doc, "/summary/prefill/points"),
	     100 * field(doc, "/summary/decode/median"),
	     100 * field(doc, "/summary/decode/worst"),
	     100 * field(doc, "/summary/prefill/median"),
	     100 * field(doc, "/summary/prefill/worst"),
	     json_is_true(jx_at(doc, "/summary/decode/holds")) &&
	     json_is_true(jx_at(doc, "/summary/prefill/holds"))
		     ? "met" : "not met");
	if (field(doc, "/summary/concurrency-bound/points") > 0)
		text(blocks, "At %.0f concurrency-bound points (many concurrent "
		     "long requests, more than the simulated KV cache holds at "
		     "once) the decode figures are within %.1f%% (median) and "
		     "%.1f%% (worst); the goal, each within 25%%, is %s.",
		     field(doc, "/summary/concurrency-bound/points"),
		     100 * field(doc, "/summary/concurrency-bound/median"),
		     100 * field(doc, "/summary/concurrency-bound/worst"),
		     json_is_true(jx_at(doc, "/summary/concurrency-bound/holds"))
			     ? "met" : "not met");
}

/* The paper's setting: a row per run of the protocols. A figure a
 * protocol has not (alpha without drafts, verifications without a cloud)
 * is an empty cell, with a footnote. */
static void setting(json_t *blocks, const char *dir)
{
	static const char *const runs[] = { "edge_only", "cloud_only",
		"cloud_spec", "sync", "async", "multi_tenant", NULL };
	static const char *const heads[] = { "run", "protocol", "mean ITL (ms)",
		"p99 ITL (ms)", "TTFT p50 (s)", "tokens/s per tenant", "alpha",
		"tokens per verification", "GPU busy", "SLO met", NULL };
	json_t *rows = table(blocks, heads);
	bool empty = false;

	for (size_t i = 0; runs[i]; i++) {
		char path[4096];
		json_t *doc, *g, *r;
		const char *proto;
		const struct proto_caps *caps = NULL;
		size_t k;
		int kind;

		snprintf(path, sizeof(path), "%s/runs/%s/summary.json", dir, runs[i]);
		if (!(doc = opt_load(path)))
			continue;
		proto = json_string_value(jx_at(doc, "/groups/0/protocol"));
		json_array_foreach(json_object_get(doc, "groups"), k, g)
			if (proto && strcmp(proto, json_string_value(json_object_get(
							   g, "protocol"))))
				proto = "mixed";
		if (proto && (kind = cfg_name_find(cfg_proto_names, proto)) >= 0)
			caps = cfg_proto_caps((enum proto_kind)kind);
		r = row(rows);
		cell(r, "%s", runs[i]);
		cell(r, "%s", proto ? proto : "");
		cell(r, "%.1f", 1e3 * field(doc, "/all/itl_s/mean"));
		cell(r, "%.1f", 1e3 * field(doc, "/all/itl_s/p99"));
		cell(r, "%.2f", field(doc, "/all/ttft_s/p50"));
		cell(r, "%.2f", field(doc, "/all/tokens_per_s_per_tenant"));
		if (caps && !cfg_proto_drafts(caps)) {
			cell(r, "%s", "");
			empty = true;
		} else {
			cell(r, "%.3f", field(doc, "/all/alpha"));
		}
		if (caps && !caps->uses_cloud) {
			cell(r, "%s", "");
			empty = true;
		} else {
			cell(r, "%.2f", field(doc, "/all/tokens_per_verdict"));
		}
		cell(r, "%.1f%%", 100 * field(doc, "/cloud/busy_fraction"));
		cell(r, "%.1f%%", 100 * field(doc, "/all/slo_attainment"));
		json_decref(doc);
	}
	{
		char path[4096];
		json_t *doc;

		snprintf(path, sizeof(path), "%s/runs/cloud_only/summary.json",
			 dir);
		if ((doc = opt_load(path))) {
			text(blocks, "The cloud's iteration costs: %s.",
			     json_string_value(jx_at(doc, "/cloud/pricing")));
			json_decref(doc);
		}
		snprintf(path, sizeof(path), "%s/gpu-check.json", dir);
		if ((doc = opt_load(path))) {
			gpu_check(blocks, doc);
			json_decref(doc);
		}
	}
	if (empty)
		text(blocks, "An empty cell: the protocol has no such figure "
		     "(edge_only and cloud_only judge no drafts; edge_only sends "
		     "nothing to verify). cloud_only's tokens per verification "
		     "counts each decode step as one.");
	ttft_source(blocks, dir);
}

/* The handover start against the edge's own prefill (sweep handover):
 * TTFT, ITL, the share handed over and the GPU's busy time, by output
 * length and policy. */
static int handover_table(json_t *blocks, const char *dir, struct err *e)
{
	struct csv c = { 0 };
	int have, rc;

	if ((have = load_sweep(&c, dir, "handover", blocks, false, e)) <= 0)
		return have;
	text(blocks, "A handover start (docs/protocols.md): the paper's async "
	     "setting with Qwen2.5-0.5B drafting on the Snapdragon 8 Gen 3 "
	     "(results/calib/pairs, derived) for Qwen2.5-7B, by output length "
	     "and policy: never (the phone prefills the 512-token prompt, then "
	     "drafts), always (the cloud serves until the phone's cache has "
	     "caught up), faster (only when the protocol's expected time a "
	     "token beats the cloud's). 32 phones on one H100, 2 seeds.");
	rc = 0;
	for (int i = 0; i < 4 && rc == 0; i++) {
		static const struct { const char *what, *metric, *fmt; double k; }
		m[] = {
			{ "TTFT p50 (s)", "all.ttft_s.p50", "%.3f", 1 },
			{ "mean ITL (ms)", "all.itl_s.mean", "%.1f", 1e3 },
			{ "share of the requests handed over",
			  "all.handover_share", "%.2f", 1 },
			{ "the GPU's busy share (what the cloud's decoding "
			  "costs)", "cloud.busy_fraction", "%.2f", 1 },
		};

		text(blocks, "%s:", m[i].what);
		rc = pivot(blocks, &c, "tenants.0.workload.output_tokens",
			   "output tokens", "protocol.handover", m[i].metric,
			   m[i].k, m[i].fmt, e);
	}
	csv_release(&c);
	return rc < 0 ? -1 : 0;
}

/* The handover's map (sweep handover-map): by protocol, device, RTT and
 * tenants, what "always" does against "never": TTFT p50, mean ITL, and
 * the GPU-seconds a request (busy share x simulated time / requests); the
 * handover is worth it where TTFT p50 falls to half or less and mean ITL
 * does not rise. A request the cloud mostly keeps (handed over in under
 * half of them: the device's prefill outlasts the answer) costs what
 * cloud_only's does. The table is the devices' derived prefill (band
 * "none"); the sweep repeats it at each end of the profile's held-out
 * prefill band ("low", "high"), which the verdict counts too. */
enum { HM_KIND, HM_DEV, HM_RTT, HM_N, HM_POLICY, HM_BAND, HM_TTFT, HM_ITL,
       HM_SHARE, HM_BUSY, HM_TIME, HM_DONE, HM_COLS };
#define HM_MAX_COUNTS 8 /* the table's columns: tenant counts */

/* The row with r's protocol, device and RTT, count tenants, policy and
 * prefill band, or c->nrow. */
static size_t hm_row(const struct csv *c, const int *col, size_t r,
		     const char *count, const char *policy, const char *band)
{
	for (size_t q = 0; q < c->nrow; q++) {
		bool same = !strcmp(csv_str(c, q, col[HM_POLICY]), policy) &&
			    !strcmp(csv_str(c, q, col[HM_N]), count) &&
			    !strcmp(csv_str(c, q, col[HM_BAND]), band);

		for (int k = HM_KIND; k <= HM_RTT && same; k++)
			same = !strcmp(csv_str(c, q, col[k]), csv_str(c, r, col[k]));
		if (same)
			return q;
	}
	return c->nrow;
}

static double hm_gpu_s(const struct csv *c, const int *col, size_t r)
{
	double done = cnum(c, r, col[HM_DONE]);

	return done > 0 ? cnum(c, r, col[HM_BUSY]) *
				  cnum(c, r, col[HM_TIME]) / done : 0;
}

/* The device of a pair profile's path (edge-DEVICE-MODEL-w4a16.json). */
static void hm_device(const char *path, char *out, size_t cap)
{
	const char *b = strrchr(path, '/'), *m;

	b = b ? b + 1 : path;
	if (!strncmp(b, "edge-", 5))
		b += 5;
	m = strstr(b, "-qwen");
	snprintf(out, cap, "%.*s", m ? (int)(m - b) : (int)strlen(b), b);
}

struct hm_tally {
	size_t cells, worth, kept;
	double gpu_min_s, gpu_max_s;
};

/* The cell of never's row n and always' row a, into t, and into rw
 * unless NULL. */
static void hm_cell(json_t *rw, const struct csv *c, const int *col,
		    size_t n, size_t a, struct hm_tally *t)
{
	double t0 = cnum(c, n, col[HM_TTFT]), t1 = cnum(c, a, col[HM_TTFT]);
	double i0 = cnum(c, n, col[HM_ITL]), i1 = cnum(c, a, col[HM_ITL]);
	double dg = hm_gpu_s(c, col, a) - hm_gpu_s(c, col, n);
	bool whole = cnum(c, a, col[HM_SHARE]) < 0.5;
	bool yes = t1 <= t0 / 2 && i1 <= i0;

	t->cells++;
	t->worth += yes;
	t->kept += yes && whole;
	t->gpu_min_s = fmin(t->gpu_min_s, dg);
	t->gpu_max_s = fmax(t->gpu_max_s, dg);
	if (rw)
		cell(rw, "%s: TTFT %.2f → %.2f s, ITL %.1f → %.1f ms, GPU %+.3f s",
		     !yes ? "no" : whole ? "*cloud's*" : "**worth it**", t0, t1,
		     1e3 * i0, 1e3 * i1, dg);
}

static int handover_map(json_t *blocks, const char *dir, struct err *e)
{
	static const char *const names[] = { "protocol.kind",
		"tenants.0.device.profile", "tenants.0.wan.rtt_s.mean",
		"tenants.0.count", "protocol.handover",
		"tenants.0.device.prefill_band", "all.ttft_s.p50_mean",
		"all.itl_s.mean_mean", "all.handover_share_mean",
		"cloud.busy_fraction_mean", "sim_time_s_mean",
		"requests_done_mean", NULL };
	struct hm_tally t[NBAND_ENDS];
	const char *counts[HM_MAX_COUNTS];
	size_t nn;
	bool more;
	struct csv c = { 0 };
	int col[HM_COLS], have;
	json_t *head, *rows;

	for (int k = 0; k < NBAND_ENDS; k++)
		t[k] = (struct hm_tally){ .gpu_min_s = INFINITY,
					  .gpu_max_s = -INFINITY };
	if ((have = load_sweep(&c, dir, "handover-map", blocks, false, e)) <= 0)
		return have;
	if (cols(&c, names, col, e) < 0) {
		csv_release(&c);
		return -1;
	}
	text(blocks, "Where the handover start is worth it (sweep handover-map: "
	     "Qwen2.5-0.5B drafting for Qwen2.5-7B on a Raspberry Pi 5, the "
	     "Snapdragon 8 Gen 3 and an M2 Pro, results/calib/pairs, derived; "
	     "the paper's setting otherwise, one H100, 4 requests a tenant, 2 "
	     "seeds). A cell: TTFT p50 and mean ITL with `always` against "
	     "`never`, and the GPU-seconds a request it adds (busy share x "
	     "simulated time / requests). **worth it**: TTFT p50 at most half "
	     "and mean ITL no higher; *cloud's*: the same, the cloud keeping "
	     "most requests whole (the device's prefill outlasts the answer), "
	     "at cloud_only's GPU time.");
	nn = distinct(&c, col[HM_N], counts, HM_MAX_COUNTS, &more);
	if (more) {
		csv_release(&c);
		return err_set(e, "sweep handover-map: more tenant counts than "
			       "its table's %d", HM_MAX_COUNTS);
	}
	head = json_array();
	json_array_append_new(head, json_string("protocol, device, RTT (s)"));
	for (size_t j = 0; j < nn; j++)
		json_array_append_new(head, json_sprintf("%s tenants", counts[j]));
	rows = table_of(blocks, head);
	/* a table row at the first never row of each protocol, device, RTT */
	for (size_t r = 0; r < c.nrow; r++) {
		char dev[128];
		json_t *rw;

		if (hm_row(&c, col, r, counts[0], "never", "none") != r)
			continue;
		hm_device(csv_str(&c, r, col[HM_DEV]), dev, sizeof(dev));
		rw = row(rows);
		cell(rw, "%s, %s, %s", csv_str(&c, r, col[HM_KIND]), dev,
		     csv_str(&c, r, col[HM_RTT]));
		for (size_t j = 0; j < nn; j++)
			for (int k = 0; k < NBAND_ENDS; k++) {
				size_t n = hm_row(&c, col, r, counts[j], "never",
						  band_ends[k]);
				size_t a = hm_row(&c, col, r, counts[j], "always",
						  band_ends[k]);

				if (n < c.nrow && a < c.nrow)
					hm_cell(k ? NULL : rw, &c, col, n, a, &t[k]);
				else if (!k)
					cell(rw, "%s", "");
			}
	}
	if (t[0].cells)
		text(blocks, "The handover is worth it in %zu of %zu cells (%zu of "
		     "them the cloud's); it adds %.3f to %.3f GPU-seconds a "
		     "request.", t[0].worth, t[0].cells, t[0].kept,
		     t[0].gpu_min_s, t[0].gpu_max_s);
	if (t[1].cells && t[2].cells)
		text(blocks, "Sensitivity: with each device's prefill at the ends "
		     "of its profile's held-out band (device/prefill_band: the "
		     "time a token times 1 + the lowest and 1 + the highest "
		     "error), the handover is worth it in %zu of %zu cells at "
		     "the fast end (%zu the cloud's) and %zu of %zu at the slow "
		     "end (%zu the cloud's): %s.", t[1].worth, t[1].cells,
		     t[1].kept, t[2].worth, t[2].cells, t[2].kept,
		     t[1].worth == t[0].worth && t[2].worth == t[0].worth
			     ? "the count holds across the band"
			     : "the count moves inside the band");
	csv_release(&c);
	return 0;
}

/* The other sweeps' tables, keyed by sweep (empty where it is missing). */
static int others(json_t *out, const char *dir, struct err *e)
{
	json_t *tenants = json_array(), *gamma = json_array();
	json_t *hand = json_array();
	struct csv c = { 0 };
	int rc = 0, have;

	json_object_set_new(out, "itl-vs-tenants", tenants);
	json_object_set_new(out, "itl-vs-gamma", gamma);
	json_object_set_new(out, "handover", hand);
	if (handover_table(hand, dir, e) < 0 || handover_map(hand, dir, e) < 0)
		return -1;
	if ((have = load_sweep(&c, dir, "itl-vs-tenants", tenants, false, e)) < 0)
		return -1;
	if (have) {
		text(tenants, "Mean ITL (ms) against the number of tenants on one "
		     "GPU:");
		rc = pivot(tenants, &c, "tenants.0.count", "tenants",
			   "protocol.kind", "all.itl_s.mean", 1e3, "%.1f", e);
		csv_release(&c);
	}
	if (rc < 0 ||
	    (have = load_sweep(&c, dir, "itl-vs-gamma", gamma, false, e)) < 0)
		return -1;
	if (have) {
		text(gamma, "Mean ITL (ms) and tokens committed per verification "
		     "against gamma:");
		rc = pivot(gamma, &c, "protocol.gamma", "gamma", "protocol.kind",
			   "all.itl_s.mean", 1e3, "%.1f", e) < 0 ||
		     pivot(gamma, &c, "protocol.gamma", "gamma", "protocol.kind",
			   "all.tokens_per_verdict", 1, "%.2f", e) < 0 ? -1 : 0;
		csv_release(&c);
	}
	return rc;
}

/* The phone of the paper's sync run: its draft step (else the middle of
 * the swept draft times) and its profile's held-out decode band */
static struct phone phone_of(const char *dir, const struct cmap_grid *rg)
{
	struct phone ph = { 0 };
	char path[4096];
	json_t *conf, *prof = NULL;
	const char *file;

	snprintf(path, sizeof(path), "%s/runs/sync/config.resolved.json", dir);
	if ((conf = opt_load(path))) {
		ph.s = field(conf, "/tenants/0/device/draft_base_s");
		file = json_string_value(jx_at(conf, "/tenants/0/device/profile"));
		if (file && (prof = opt_load(file)) &&
		    json_is_number(jx_at(prof, "/derivation/held_out/decode/"
					 "lowest"))) {
			ph.lo = field(prof, "/derivation/held_out/decode/lowest");
			ph.hi = field(prof, "/derivation/held_out/decode/highest");
		}
		json_decref(prof);
		json_decref(conf);
	}
	if (ph.s <= 0)
		ph.s = rg->nd ? rg->d[rg->nd / 2] : 0;
	return ph;
}

json_t *claims_compute(const char *dir, const char *calib, struct err *e)
{
	json_t *out = json_pack("{s:[],s:[],s:[],s:{}}", "thresholds", "setting",
				"claims", "others");
	json_t *th = json_object_get(out, "thresholds");
	json_t *claims = json_object_get(out, "claims");
	json_t *meas;
	struct cmap_grid g;
	struct phone ph;
	struct rtt d;
	int rc;

	bad_seen = false;
	meas = measured_points(calib);
	for (const struct threshold *t = thresholds; t->name; t++)
		json_array_append_new(th, json_pack("{s:s,s:f,s:s}", "name",
						    t->name, "value", t->value,
						    "meaning", t->meaning));
	setting(json_object_get(out, "setting"), dir);
	rc = cmap_load(&g, dir, e) < 0 || rtt_read(&d, dir, e) < 0 ? -1 : 0;
	if (rc == 0) {
		ph = phone_of(dir, &g);
		rc = claim_a(claims, &d, &g, meas, &ph, e) < 0 ||
		     claim_b(claims, calib, e) < 0 || claim_c(claims, dir, e) < 0 ||
		     claim_d(claims, dir, e) < 0 ||
		     claim_e(claims, dir, &d, &g, meas, &ph) < 0 ||
		     claim_f(claims, dir, &g, meas, e) < 0 ||
		     others(json_object_get(out, "others"), dir, e) < 0 ? -1 : 0;
	}
	if (rc == 0 && bad_seen) { /* an input there that cannot be read */
		*e = bad_input;
		rc = -1;
	}
	if (rc < 0) {
		json_decref(out);
		out = NULL;
	}
	csv_release(&d.sweep);
	json_decref(meas);
	return out;
}
