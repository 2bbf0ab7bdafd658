/* cprof.c: `calib import-profiles`: measured operator profiles in Vidur's
 * layout turned into operator tables (optab.h) and efficiency curves
 * (gcurve.h).
 *
 * A profile (compute/<gpu>/<org>/<model>/mlp.csv) becomes a struct series
 * a tensor-parallel degree: a layer's time, its four linear operators' and
 * the embedding's, by tokens, ascending (repeated token counts averaged).
 * A GPU's curve is the median over its gated (SwiGLU) models at tp 1; a
 * table is the series of a model with a built-in shape, priced at the GPU's
 * curve, with all-reduces from network/<topology>/all_reduce.csv. The
 * held-out checks derive each profiled table without the profile it is
 * checked against (calib.h). */
#include "cprof.h"

#include "csv.h"
#include "fs.h"
#include "gpu.h"
#include "jx.h"
#include "mem.h"
#include "optab.h"
#include "order.h"
#include "shape.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A profiled GPU folder: the preset it is, and its all-reduce topology. */
static const struct {
	const char *dir, *preset, *network;
} gpus[] = {
	{ "a100", "A100-80G", "a100_dgx" },
	{ "h100", "H100-SXM", "h100_dgx" },
	{ "a40", "A40", "a40_pairwise_nvlink" },
};
#define N_GPUS (sizeof(gpus) / sizeof(gpus[0]))

enum { MAX_TP = 8, MAX_MODELS = 16 };

struct series {
	size_t n;
	double *tok, *layer_s, *linear_s, *emb_s; /* (n) owned */
};

/* One profile: a model on a GPU. */
struct model_prof {
	char repo[128];            /* org/model */
	char file[2100];           /* its mlp.csv, for messages */
	const struct shape *shape; /* built-in, or NULL: curves only */
	struct shape dims;         /* a layer's, from the file's columns */
	bool gated;
	struct series tp[MAX_TP + 1]; /* by degree; n 0: not profiled */
};

/* A collective table: seconds of an all-reduce by bytes, a degree. */
struct network {
	struct series by_tp[MAX_TP + 1]; /* tok: bytes; layer_s: seconds */
	bool found;
};

static void series_release(struct series *s)
{
	free(s->tok);
	free(s->layer_s);
	free(s->linear_s);
	free(s->emb_s);
	*s = (struct series){ 0 };
}

/* One of the series' arrays at x (gcurve_interp over its tokens). */
static double series_at(const struct series *s, const double *v, double x)
{
	return gcurve_interp(s->tok, v, s->n, x);
}

/* Adds (x, a, b, c) to s kept ascending in x, averaging a repeated x
 * (count in cnt, parallel to s). */
static void series_add(struct series *s, size_t **cnt, double x, double a,
		       double b, double c)
{
	size_t i = 0;

	while (i < s->n && s->tok[i] < x)
		i++;
	if (i < s->n && s->tok[i] == x) {
		double k = (double)++(*cnt)[i];

		s->layer_s[i] += (a - s->layer_s[i]) / k;
		s->linear_s[i] += (b - s->linear_s[i]) / k;
		s->emb_s[i] += (c - s->emb_s[i]) / k;
		return;
	}
	s->tok = xrealloc(s->tok, (s->n + 1) * sizeof(double));
	s->layer_s = xrealloc(s->layer_s, (s->n + 1) * sizeof(double));
	s->linear_s = xrealloc(s->linear_s, (s->n + 1) * sizeof(double));
	s->emb_s = xrealloc(s->emb_s, (s->n + 1) * sizeof(double));
	*cnt = xrealloc(*cnt, (s->n + 1) * sizeof(size_t));
	for (size_t j = s->n; j > i; j--) {
		s->tok[j] = s->tok[j - 1];
		s->layer_s[j] = s->layer_s[j - 1];
		s->linear_s[j] = s->linear_s[j - 1];
		s->emb_s[j] = s->emb_s[j - 1];
		(*cnt)[j] = (*cnt)[j - 1];
	}
	s->tok[i] = x;
	s->layer_s[i] = a;
	s->linear_s[i] = b;
	s->emb_s[i] = c;
	(*cnt)[i] = 1;
	s->n++;
}

/* The layer's operators Vidur times: those present are summed; the four
 * linear ones and the embedding must be there. */
static const char *const layer_ops[] = { "input_layernorm", "attn_pre_proj",
	"attn_rope", "attn_post_proj", "post_attention_layernorm",
	"mlp_up_proj", "mlp_act", "mlp_down_proj", "add", NULL };
static const char *const linear_ops[] = { "attn_pre_proj", "attn_post_proj",
	"mlp_up_proj", "mlp_down_proj", NULL };

static int median_col(const struct csv *c, const char *op, bool required,
		      struct err *e)
{
	char name[96];

	snprintf(name, sizeof(name), "time_stats.%s.median", op);
	if (!required) {
		for (size_t j = 0; j < c->ncol; j++)
			if (!strcmp(c->cell[j], name))
				return (int)j;
		return -1;
	}
	return csv_col(c, name, e);
}

static bool is_linear(const char *op)
{
	for (int i = 0; linear_ops[i]; i++)
		if (!strcmp(op, linear_ops[i]))
			return true;
	return false;
}

/* Whether every cell of the columns cols (n of them; < 0: absent) is a
 * number: whole, finite, >= 0 and at most 1e9 (a time in ms, a count, a
 * size: an exponent's typo is refused, not imported); -1 with e naming
 * the line and the column */
static int check_nums(const struct csv *c, const char *path, const int *cols,
		      int n, struct err *e)
{
	for (size_t r = 0; r < c->nrow; r++)
		for (int i = 0; i < n; i++) {
			const char *t;
			char *end;
			double v;

			if (cols[i] < 0)
				continue;
			t = csv_str(c, r, cols[i]);
			v = strtod(t, &end);
			if (end == t || *end || !(v >= 0 && v <= 1e9))
				return err_set(e, "%s:%zu: %s: expected a number "
					       "in [0, 1e9], got \"%.40s\"", path,
					       r + 2, c->cell[cols[i]], t);
		}
	return 0;
}

/* Reads path into m: the dims from row 1, a series a tp. */
static int read_mlp(const char *path, struct model_prof *m, struct err *e)
{
	static const char *const dims[] = { "num_tokens",
		"num_tensor_parallel_workers", "n_embd", "n_expanded_embd",
		"n_head", "n_kv_head", "use_gated_mlp", NULL };
	int col[8], ops[16], emb;
	size_t *cnt[MAX_TP + 1] = { 0 };
	struct csv c;
	int rc = -1;

	if (csv_load_cols(&c, path, dims, col, e) < 0)
		return -1;
	if ((emb = median_col(&c, "emb", true, e)) < 0)
		goto out;
	for (int i = 0; layer_ops[i]; i++)
		if ((ops[i] = median_col(&c, layer_ops[i], is_linear(layer_ops[i]),
					 e)) < 0 && is_linear(layer_ops[i]))
			goto out;
	if (c.nrow == 0) {
		err_set(e, "%s: expected rows of timings, found only the header",
			path);
		goto out;
	}
	{
		int num[24], nn = 0;

		for (int i = 0; i < 6; i++) /* the dims but use_gated_mlp */
			num[nn++] = col[i];
		num[nn++] = emb;
		for (int i = 0; layer_ops[i] && nn < 24; i++)
			num[nn++] = ops[i];
		if (check_nums(&c, path, num, nn, e) < 0)
			goto out;
	}
	m->dims = (struct shape){ .arch = "llama", .n_layers = 1,
		.dim = (int)csv_num(&c, 0, col[2]),
		.hidden = (int)csv_num(&c, 0, col[3]),
		.n_heads = (int)csv_num(&c, 0, col[4]),
		.n_kv_heads = (int)csv_num(&c, 0, col[5]) };
	strcpy(m->dims.name, "a profiled layer");
	m->gated = !strcmp(csv_str(&c, 0, col[6]), "True");
	if (!m->gated && strcmp(csv_str(&c, 0, col[6]), "False")) {
		err_set(e, "%s:2: use_gated_mlp: expected True or False, got "
			"\"%.40s\"", path, csv_str(&c, 0, col[6]));
		goto out;
	}
	for (size_t r = 0; r < c.nrow; r++) {
		double tok = csv_num(&c, r, col[0]), tp = csv_num(&c, r, col[1]);
		double layer = 0, lin = 0;

		if (!(tok >= 1) || !(tp >= 1) || tp > MAX_TP || tp != floor(tp)) {
			err_set(e, "%s:%zu: expected num_tokens >= 1 and "
				"num_tensor_parallel_workers in 1..%d, got \"%s\" "
				"and \"%s\"", path, r + 2, MAX_TP,
				csv_str(&c, r, col[0]), csv_str(&c, r, col[1]));
			goto out;
		}
		for (int i = 0; layer_ops[i]; i++) {
			double v = ops[i] < 0 ? 0 : csv_num(&c, r, ops[i]) * 1e-3;

			layer += v;
			lin += is_linear(layer_ops[i]) ? v : 0;
		}
		if (!(lin > 0)) {
			err_set(e, "%s:%zu: expected times > 0 ms for the linear "
				"operators, got none", path, r + 2);
			goto out;
		}
		series_add(&m->tp[(int)tp], &cnt[(int)tp], tok, layer, lin,
			   csv_num(&c, r, emb) * 1e-3);
	}
	/* a table's grid is read off the profile: two counts at least, the
	 * first on the grid (past it, extrapolated from the last two) */
	for (int t = 1; t <= MAX_TP; t++) {
		const struct series *s = &m->tp[t];

		if (s->n && (s->n < 2 || s->tok[0] > gcurve_tok[GCURVE_N - 1])) {
			err_set(e, "%s: num_tokens at tp %d: expected two token "
				"counts or more, the first at most %g (the "
				"grid's last), got %zu from %g", path, t,
				gcurve_tok[GCURVE_N - 1], s->n, s->tok[0]);
			goto out;
		}
	}
	rc = 0;
out:
	for (int t = 0; t <= MAX_TP; t++) {
		free(cnt[t]);
		if (rc < 0) /* a profile refused keeps nothing */
			series_release(&m->tp[t]);
	}
	csv_release(&c);
	return rc;
}

static int read_network(const char *path, struct network *n, struct err *e)
{
	static const char *const names[] = { "time_stats.all_reduce.median",
		"num_workers", "size", "devices_per_node", NULL };
	size_t *cnt[MAX_TP + 1] = { 0 };
	int col[4];
	struct csv c;

	if (csv_load_cols(&c, path, names, col, e) < 0)
		return -1;
	if (check_nums(&c, path, col, 4, e) < 0) {
		csv_release(&c);
		return -1;
	}
	for (size_t r = 0; r < c.nrow; r++) {
		double w = csv_num(&c, r, col[1]);

		/* one node: every worker a GPU of the same server */
		if (w >= 2 && w <= MAX_TP && w == csv_num(&c, r, col[3]))
			series_add(&n->by_tp[(int)w], &cnt[(int)w],
				   csv_num(&c, r, col[2]),
				   csv_num(&c, r, col[0]) * 1e-3, 0, 0);
	}
	for (int t = 0; t <= MAX_TP; t++)
		free(cnt[t]);
	csv_release(&c);
	n->found = true;
	return 0;
}

/* The curve of one profile at tp 1 on g: eff, eta_flops, eta_bw. */
static void profile_curve(const struct model_prof *m,
			  const struct gpu_spec *g, struct gcurve *c)
{
	const struct series *s = &m->tp[1];
	double by, fl;

	for (size_t i = 0; i < GCURVE_N; i++) {
		double t = gcurve_tok[i];

		gcurve_body(&m->dims, 2, 1, t, &by, &fl);
		c->eff[i] = fmin(1, gcurve_roofline_s(g, by, fl) /
					    series_at(s, s->layer_s, t));
		c->eta_flops[i] = fmin(1, fl / (g->fp16_flops *
						series_at(s, s->linear_s, t)));
		if (i == 0)
			c->eta_bw = fmin(1, by / (g->mem_bw_Bps *
						  series_at(s, s->linear_s, t)));
	}
}

/* The GPU's curve: the median over its gated models at tp 1 but skip (an
 * index, or -1 for none). 0, or -1 when no model is left. */
static int gpu_curve(const struct model_prof *m, size_t nm, long skip,
		     const struct gpu_spec *g, struct gcurve *out)
{
	struct gcurve c[MAX_MODELS];
	double v[MAX_MODELS];
	size_t k = 0, len;

	*out = (struct gcurve){ 0 };
	snprintf(out->gpu, sizeof(out->gpu), "%s", g->name);
	len = (size_t)snprintf(out->from, sizeof(out->from),
			       "fitted on %s profiles of", g->name);
	for (size_t i = 0; i < nm; i++)
		if ((long)i != skip && m[i].gated && m[i].tp[1].n) {
			profile_curve(&m[i], g, &c[k]);
			if (len < sizeof(out->from))
				len += (size_t)snprintf(out->from + len,
					sizeof(out->from) - len, "%s %.60s",
					k ? "," : "", strchr(m[i].repo, '/') + 1);
			k++;
		}
	if (!k)
		return -1;
	for (size_t i = 0; i < GCURVE_N; i++) {
		for (size_t j = 0; j < k; j++)
			v[j] = c[j].eff[i];
		out->eff[i] = order_median(v, k);
		for (size_t j = 0; j < k; j++)
			v[j] = c[j].eta_flops[i];
		out->eta_flops[i] = order_median(v, k);
	}
	for (size_t j = 0; j < k; j++)
		v[j] = c[j].eta_bw;
	out->eta_bw = order_median(v, k);
	return 0;
}

/* The measured table of m at tp on g (its curve c, its network n). */
static void measured_table(const struct model_prof *m, int tp,
			   const struct gpu_spec *g, const struct gcurve *c,
			   const struct network *n, struct optab *t)
{
	const struct series *s = &m->tp[tp];
	const struct shape *sh = m->shape;
	const struct series *net = n->found ? &n->by_tp[tp] : NULL;
	int raised = 0;
	size_t len;

	*t = (struct optab){ .curve = *c, .tp = tp, .measured = true,
			     .overhead_s = optab_overhead_s };
	snprintf(t->gpu, sizeof(t->gpu), "%s", g->name);
	snprintf(t->model, sizeof(t->model), "%s", sh->name);
	for (size_t i = 0; i < GCURVE_N; i++) {
		double tok = gcurve_tok[i], bytes = 2.0 * tok * sh->dim;

		t->layers_s[i] = sh->n_layers * series_at(s, s->layer_s, tok) +
				 series_at(s, s->emb_s, tok);
		if (tp > 1 && net && net->n)
			t->allreduce_s[i] = 2.0 * sh->n_layers *
					    series_at(net, net->layer_s, bytes);
		else if (tp > 1)
			t->allreduce_s[i] = 2.0 * sh->n_layers *
				gpu_allreduce_s(gpu_link_find(g->link), tp, bytes);
	}
	/* the simulator takes a cost that more tokens never lower: a point
	 * below one of fewer tokens (noise) is raised to it */
	for (size_t i = 1; i < GCURVE_N; i++)
		if (t->layers_s[i] < t->layers_s[i - 1]) {
			t->layers_s[i] = t->layers_s[i - 1];
			raised++;
		}
	len = (size_t)snprintf(t->pricing, sizeof(t->pricing), "measured: "
		"operator profiles of %.80s on %.40s at tp %d%s; %d of %d points "
		"raised to the time of fewer tokens", m->repo, g->name, tp,
		tp == 1 ? "" : net && net->n ? ", all-reduces measured"
			     : ", all-reduces from the link's model (no "
			       "measured collectives)", raised, GCURVE_N);
	/* the grid past the profile's tokens: held below, a line above */
	if (s->tok[0] > gcurve_tok[0] && len < sizeof(t->pricing))
		len += (size_t)snprintf(t->pricing + len,
					sizeof(t->pricing) - len, "; below %g "
					"tokens (the profile's first) its time",
					s->tok[0]);
	if (s->tok[s->n - 1] < gcurve_tok[GCURVE_N - 1] &&
	    len < sizeof(t->pricing))
		snprintf(t->pricing + len, sizeof(t->pricing) - len, "; past %g "
			 "tokens (its last) extrapolated from its last two "
			 "points", s->tok[s->n - 1]);
}

/* |derived / measured - 1| of layers_s over the grid: median and worst. */
static void table_error(const struct optab *d, const struct optab *m,
			double *med, double *worst)
{
	double v[GCURVE_N];

	*worst = 0;
	for (size_t i = 0; i < GCURVE_N; i++) {
		v[i] = fabs(d->layers_s[i] / m->layers_s[i] - 1);
		*worst = fmax(*worst, v[i]);
	}
	*med = order_median(v, GCURVE_N);
}

struct gpu_prof {
	const struct gpu_spec *spec;
	struct model_prof m[MAX_MODELS];
	size_t nm;
	struct network net;
	struct gcurve curve;
};

static void gpu_prof_release(struct gpu_prof *p)
{
	for (size_t i = 0; i < p->nm; i++)
		for (int t = 0; t <= MAX_TP; t++)
			series_release(&p->m[i].tp[t]);
	for (int t = 0; t <= MAX_TP; t++)
		series_release(&p->net.by_tp[t]);
}

/* Reads DIR/compute/<dir>/<org>/<model>/mlp.csv of one GPU into p. */
static int read_gpu(const char *compute, const char *network, size_t gi,
		    const char *model, struct gpu_prof *p, struct err *e)
{
	char path[2100], sub[1536];
	DIR *d, *o;
	struct dirent *de, *me;

	p->spec = gpu_preset_find(gpus[gi].preset);
	snprintf(sub, sizeof(sub), "%s/%s", compute, gpus[gi].dir);
	if (!(d = opendir(sub)))
		return 0;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			char org[1800];

			snprintf(org, sizeof(org), "%s/%s", sub, de->d_name);
			if (!(o = opendir(org)))
				continue;
			while ((me = readdir(o)) && p->nm < MAX_MODELS) {
				struct model_prof *m = &p->m[p->nm];

				if (me->d_name[0] == '.')
					continue;
				snprintf(path, sizeof(path), "%.1800s/%.200s/"
					 "mlp.csv", org, me->d_name);
				if (access(path, R_OK) != 0)
					continue;
				*m = (struct model_prof){ 0 };
				snprintf(m->repo, sizeof(m->repo), "%.60s/%.60s",
					 de->d_name, me->d_name);
				snprintf(m->file, sizeof(m->file), "%s", path);
				m->shape = shape_of_repo(m->repo);
				if (model && (!m->shape ||
					      strcmp(m->shape->name, model)))
					m->shape = NULL;
				if (read_mlp(path, m, e) < 0) {
					closedir(o);
					closedir(d);
					return -1;
				}
				p->nm++;
			}
			closedir(o);
		}
	closedir(d);
	snprintf(path, sizeof(path), "%s/%s/all_reduce.csv", network,
		 gpus[gi].network);
	if (!p->nm)
		return 0;
	if (access(path, R_OK) != 0)
		fprintf(stderr, "calib: no %s: all-reduces of %s from the "
			"link's model\n", path, p->spec->name);
	else if (read_network(path, &p->net, e) < 0)
		return -1;
	return 0;
}

/* Checks m's columns against its built-in shape. */
static int check_shape(const struct model_prof *m, struct err *e)
{
	const struct shape *s = m->shape, *d = &m->dims;

	if (s->dim != d->dim || s->hidden != d->hidden ||
	    s->n_heads != d->n_heads || s->n_kv_heads != d->n_kv_heads)
		return err_set(e, "%s: expected the shape of "
			       "%s (n_embd %d, n_expanded_embd %d, n_head %d, "
			       "n_kv_head %d), got %d, %d, %d, %d", m->file,
			       s->name, s->dim, s->hidden, s->n_heads,
			       s->n_kv_heads, d->dim, d->hidden, d->n_heads,
			       d->n_kv_heads);
	return 0;
}

static json_t *curve_json(const struct gcurve *c)
{
	json_t *eff = json_array(), *fl = json_array();

	for (size_t i = 0; i < GCURVE_N; i++) {
		json_array_append_new(eff, json_real(c->eff[i]));
		json_array_append_new(fl, json_real(c->eta_flops[i]));
	}
	return json_pack("{s:s, s:f, s:o, s:o, s:s}", "gpu", c->gpu, "eta_bw",
			 c->eta_bw, "eta_flops", fl, "eff", eff, "from",
			 c->from);
}

/* Derives m on g at tp 1 from c and adds its error against the measured
 * table to held (a line on stderr). */
static void held_out(json_t *held, const struct model_prof *m,
		     const struct gpu_prof *g, const struct gcurve *c,
		     const char *left_out)
{
	struct optab meas, der;
	double med, worst;

	measured_table(m, 1, g->spec, &g->curve, &g->net, &meas);
	optab_derive(&der, m->shape, 2, g->spec, 1,
		     gpu_link_find(g->spec->link), c);
	table_error(&der, &meas, &med, &worst);
	fprintf(stderr, "calib: held out (%s): %s on %s, tp 1, from the curve "
		"%s: "
		"median |error| %.1f%%, worst %.1f%%\n", left_out,
		m->shape->name, g->spec->name, c->from, 100 * med, 100 * worst);
	json_array_append_new(held, json_pack("{s:s, s:s, s:s, s:s, s:f, s:f}",
		"left_out", left_out, "gpu", g->spec->name, "model",
		m->shape->name, "derived", c->from, "median_error", med,
		"worst_error", worst));
}

static void print_rows(const struct gpu_prof *g, size_t ng)
{
	printf("static const struct gcurve fitted[] = {\n");
	for (size_t k = 0; k < ng; k++) {
		const struct gcurve *c = &g[k].curve;

		if (!c->gpu[0])
			continue;
		printf("\t{ \"%s\", %.4f,\n\t  {", c->gpu, c->eta_bw);
		for (size_t i = 0; i < GCURVE_N; i++)
			printf("%s%.4f", i ? (i % 7 ? ", " : ",\n\t   ") : " ",
			       c->eta_flops[i]);
		printf(" },\n\t  {");
		for (size_t i = 0; i < GCURVE_N; i++)
			printf("%s%.4f", i ? (i % 7 ? ", " : ",\n\t   ") : " ",
			       c->eff[i]);
		printf(" },\n\t  ");
		for (size_t i = 0; i < strlen(c->from); i += 60)
			printf("%s\"%.60s\"", i ? "\n\t  " : "", c->from + i);
		printf(" },\n");
	}
	printf("\t{ \"\", 0, { 0 }, { 0 }, \"\" }\n};\n");
}

static int find_compute(const char *dir, char *compute, char *network,
			size_t n, struct err *e)
{
	static const char *const under[] = { "", "/data/profiling", NULL };

	for (int i = 0; under[i]; i++) {
		snprintf(compute, n, "%s%s/compute", dir, under[i]);
		snprintf(network, n, "%s%s/network", dir, under[i]);
		if (access(compute, R_OK | X_OK) == 0)
			return 0;
	}
	return err_set(e, "%s: expected a profiling folder in Vidur's layout "
		       "(compute/<gpu>/<org>/<model>/mlp.csv, network/<topology>/"
		       "all_reduce.csv), found no compute/ in it or in "
		       "data/profiling/", dir);
}

/* Writes g's tables into o->out, or with dry only checks that each may
 * be written (none there, or one hybridspec wrote); the tables, or -1. */
static int write_tables(const struct calib_import *o, struct gpu_prof *g,
			const json_t *extra, bool dry, struct err *e)
{
	char path[2048];
	size_t written = 0;

	for (size_t i = 0; i < g->nm; i++) {
		const struct model_prof *m = &g->m[i];

		if (!m->shape)
			continue;
		if (check_shape(m, e) < 0)
			return -1;
		for (int tp = 1; tp <= MAX_TP; tp++) {
			struct optab t;
			json_t *j;
			int rc;

			if (!m->tp[tp].n)
				continue;
			snprintf(path, sizeof(path), "%s/%s-%s-tp%d.json",
				 o->out, g->spec->name, m->shape->name, tp);
			if (dry) {
				if (jx_replaceable(path, NULL, NULL, o->overwrite,
						   e) < 0)
					return -1;
				written++;
				continue;
			}
			measured_table(m, tp, g->spec, &g->curve, &g->net, &t);
			j = optab_json(&t, extra);
			rc = jx_save(path, j, e);
			json_decref(j);
			if (rc < 0)
				return -1;
			written++;
			fprintf(stderr, "calib: wrote %s (%s)\n", path,
				t.pricing);
		}
	}
	return (int)written;
}

int calib_import_profiles(const struct calib_import *o, const json_t *prov,
			  struct err *e)
{
	static struct gpu_prof g[N_GPUS];
	char compute[1024], network[1024], path[2048];
	struct gcurve rows[N_GPUS + 1];
	json_t *curves = json_array(), *held = json_array(), *extra, *doc;
	size_t tables = 0, ng = 0;
	bool has[N_GPUS] = { false }; /* a curve and tables of GPU k */
	bool made = access(o->out, F_OK) != 0; /* OUT is made here: removed
						   again if nothing goes in */
	int rc = -1;

	memset(g, 0, sizeof(g));
	if (o->gpu) { /* one of the GPUs a profile folder may hold */
		char known[128] = "";
		size_t at = 0, k = 0;

		for (; k < N_GPUS && strcmp(o->gpu, gpus[k].preset); k++)
			at += (size_t)snprintf(known + at, sizeof(known) - at,
					       "%s%s", k ? ", " : "", gpus[k].preset);
		if (k == N_GPUS) {
			json_decref(curves);
			json_decref(held);
			return err_set(e, "--gpu: expected one of %s (the GPUs of "
				       "Vidur's profiles), got '%s'", known, o->gpu);
		}
	}
	extra = json_pack("{s:s, s:O}", "source", o->source, "provenance",
			  prov);
	if (find_compute(o->dir, compute, network, sizeof(compute), e) < 0 ||
	    fs_mkdirs(o->out, e) < 0)
		goto out;
	/* every GPU read and every file it would write checked first: a bad
	 * profile or a stranger's file leaves OUT as it was */
	for (size_t k = 0; k < N_GPUS; k++) {
		int w;

		if (o->gpu && strcmp(o->gpu, gpus[k].preset))
			continue;
		if (read_gpu(compute, network, k, o->model, &g[k], e) < 0)
			goto out;
		if (!g[k].nm || gpu_curve(g[k].m, g[k].nm, -1, g[k].spec,
					  &g[k].curve) < 0)
			continue;
		if ((w = write_tables(o, &g[k], extra, true, e)) < 0)
			goto out;
		has[k] = true;
		tables += (size_t)w;
	}
	snprintf(path, sizeof(path), "%s/curves.json", o->out);
	if (tables && jx_replaceable(path, NULL, NULL, o->overwrite, e) < 0)
		goto out;
	for (size_t k = 0; tables && k < N_GPUS; k++) {
		if (!has[k])
			continue;
		json_array_append_new(curves, curve_json(&g[k].curve));
		if (write_tables(o, &g[k], extra, false, e) < 0)
			goto out;
		ng++;
	}
	if (!tables) {
		err_set(e, "%s: no profile of a built-in model%s%s%s%s found "
			"(Llama-2-7b-hf and others: docs/gpu-costs.md)", compute,
			o->gpu ? " on " : "", o->gpu ? o->gpu : "",
			o->model ? " for " : "", o->model ? o->model : "");
		goto out;
	}
	for (size_t k = 0; k < N_GPUS; k++)
		for (size_t i = 0; i < g[k].nm; i++) {
			const struct model_prof *m = &g[k].m[i];
			struct gcurve c;
			size_t n = 0;

			if (!m->shape || !m->tp[1].n)
				continue;
			if (gpu_curve(g[k].m, g[k].nm, (long)i, g[k].spec, &c) == 0)
				held_out(held, m, &g[k], &c, "model");
			for (size_t j = 0; j < N_GPUS; j++)
				if (j != k && g[j].curve.gpu[0])
					rows[n++] = g[j].curve;
			rows[n].gpu[0] = '\0';
			if (n) {
				gcurve_average(&c, g[k].spec, rows);
				held_out(held, m, &g[k], &c, "gpu");
			}
		}
	doc = json_pack("{s:s, s:o, s:o, s:o}", "kind", "gpu-curves", "tokens",
			json_array(), "curves", json_incref(curves), "held_out",
			json_incref(held));
	for (size_t i = 0; i < GCURVE_N; i++)
		json_array_append_new(json_object_get(doc, "tokens"),
				      json_real(gcurve_tok[i]));
	json_object_update(doc, extra);
	snprintf(path, sizeof(path), "%s/curves.json", o->out);
	rc = jx_save(path, doc, e);
	json_decref(doc);
	if (rc == 0) {
		fprintf(stderr, "calib: wrote %s (%zu GPU%s, %zu table%s)\n",
			path, ng, ng == 1 ? "" : "s", tables,
			tables == 1 ? "" : "s");
		if (o->print_rows)
			print_rows(g, N_GPUS);
	}
out:
	if (rc < 0 && made)
		rmdir(o->out); /* empty: nothing was written in it */
	for (size_t k = 0; k < N_GPUS; k++)
		gpu_prof_release(&g[k]);
	json_decref(curves);
	json_decref(held);
	json_decref(extra);
	return rc;
}
