/* valrun.c: a validation study (valrun.h).
 *
 * struct vrun holds what the points share: the models and profiles
 * (struct val), the sweep, the folder being made and the rows so far.
 * Each point is a task of the farm in this process; a point that ran
 * adds one row to validate.json, validate.csv (its columns one table,
 * VALRUN_CSV) and the printed table, in the points' order. Invariant: the
 * folder is put in place only once every point ran or was listed as over
 * the edge bound. */
#define _GNU_SOURCE /* realpath */
#include "valrun.h"

#include "farm.h"
#include "fs.h"
#include "jx.h"
#include "mem.h"
#include "mload.h"
#include "outdir.h"
#include "rt.h"
#include "validate.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int dist_int(const struct dist *d, const char *what, int g, int *out,
		    struct err *e)
{
	if (d->kind != DIST_CONSTANT)
		return err_set(e, "/tenants/%d/workload/%s: the deployment needs "
			       "a constant", g, what);
	*out = (int)lround(d->a);
	return 0;
}

static int check_point(const struct cfg *c, int *np, int *nout, struct err *e)
{
	if (c->cloud.replicas != 1 || !cfg_sched_deployed(c->cloud.policy))
		return err_set(e, "/cloud: the deployment has one replica with "
			       "continuous or window batching");
	if (c->cloud.kv_policy != KV_PAGED)
		return err_set(e, "/cloud/kv_policy: the deployment pages its KV "
			       "cache (\"paged\")");
	for (size_t g = 0; g < c->n_groups; g++) {
		const struct cfg_group *G = &c->groups[g];
		int p = 0, o = 0;

		if (!G->proto.caps.speculates)
			return err_set(e, "/tenants/%zu/protocol: the deployment "
				       "runs sync or async", g);
		if (G->proto.handover == HANDOVER_FASTER)
			return err_set(e, "/tenants/%zu/protocol/handover: the "
				       "deployment hands over \"always\" or "
				       "\"never\"", g);
		if (G->workload.arrival != ARRIVAL_CLOSED)
			return err_set(e, "/tenants/%zu/workload/arrival: the "
				       "deployment runs closed loops", g);
		if (dist_int(&G->workload.prompt_tokens, "prompt_tokens", (int)g,
			     &p, e) < 0 ||
		    dist_int(&G->workload.output_tokens, "output_tokens", (int)g,
			     &o, e) < 0)
			return -1;
		if (g && (p != *np || o != *nout))
			return err_set(e, "/tenants/%zu/workload: every group needs "
				       "the same prompt and output lengths", g);
		*np = p;
		*nout = o;
	}
	return 0;
}

static double rel(double sim, double real)
{
	return real != 0 ? (sim - real) / real : 0;
}

static json_t *side_json(const struct val_side *s)
{
	return json_pack("{s:f,s:f,s:f,s:f,s:f,s:f}", "itl_s", s->itl_s,
			 "tokens_per_s", s->tokens_per_s, "alpha", s->alpha,
			 "busy_fraction", s->busy, "ttft_s", s->ttft_s,
			 "preemptions", s->preemptions);
}

/* Ends the JSON object of "POINTER=VALUE" at buf (cap bytes, at of them
 * written) with, unless extra_s is NULL, "wake": {"idle_s": pause_s,
 * "extra_s": extra_s} (VAL_WAKE_PAUSES each); returns a copy the caller
 * frees. */
static char *end_object(char *buf, size_t cap, int at, const double *pause_s,
			const double *extra_s)
{
	for (int k = 0; extra_s && k < 2; k++) {
		const double *x = k ? extra_s : pause_s;

		at += snprintf(buf + at, cap - (size_t)at, k ? "], \"extra_s\": ["
			       : ", \"wake\": {\"idle_s\": [");
		for (int i = 0; i < VAL_WAKE_PAUSES; i++)
			at += snprintf(buf + at, cap - (size_t)at, "%s%.6g",
				       i ? ", " : "", x[i]);
	}
	snprintf(buf + at, cap - (size_t)at, extra_s ? "]}}" : "}");
	return xstrdup(buf);
}

static json_t *nums_json(const double *x, int n)
{
	json_t *a = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_real(x[i]));
	return a;
}

/* val_wake's tables of a point. */
static json_t *wake_json(const struct val_point *p)
{
	return json_pack("{s:o,s:o,s:o}", "pause_s",
			 nums_json(p->wake_pause_s, VAL_WAKE_PAUSES),
			 "draft_extra_s", nums_json(p->draft_wake_s,
						    VAL_WAKE_PAUSES),
			 "verify_extra_s", nums_json(p->verify_wake_s,
						     VAL_WAKE_PAUSES));
}

/* Overrides that point the simulator at the measured profiles (and a
 * two-token pass of pair_s seconds beside the edge profile's, unless
 * negative), give every link the hosts' software time p->stack_s and,
 * with wake, the devices and the GPU p's wake tables. The
 * verifier is this CPU: its measured bandwidth and FMA peak (the edge
 * profile's) and its memory stand for a GPU's figures, which set only MBU,
 * MFU and the default KV capacity beside the measured table. Caller frees
 * with sweep_sets_free. */
static char **profile_sets(const char *cdir, const char *pdir,
			   const struct cfg *c, const char *model,
			   const struct prof_edge *pe, double pair_s,
			   const struct val_point *p, bool wake, size_t *n)
{
	char **s = xcalloc(3 * c->n_groups + 2, sizeof(char *));
	size_t k = 0;
	char buf[8400];

	for (size_t g = 0; g < c->n_groups; g++) {
		int at = snprintf(buf, sizeof(buf), "/tenants/%zu/device="
				  "{\"profile\": \"%s/edge.json\"", g, cdir);

		if (pair_s >= 0)
			at += snprintf(buf + at, sizeof(buf) - (size_t)at,
				       ", \"draft_pair_s\": %.9g", pair_s);
		s[k++] = end_object(buf, sizeof(buf), at, p->wake_pause_s,
				    wake ? p->draft_wake_s : NULL);
		snprintf(buf, sizeof(buf), "/tenants/%zu/acceptance={\"profile\": "
			 "\"%s/accept-%zu.json\", \"replay\": \"request\"}",
			 g, pdir, g);
		s[k++] = xstrdup(buf);
		snprintf(buf, sizeof(buf), "/tenants/%zu/wan/stack_s=%.9g", g,
			 p->stack_s);
		s[k++] = xstrdup(buf);
	}
	snprintf(buf, sizeof(buf), "/cloud/model=\"%s\"", model);
	s[k++] = xstrdup(buf);
	{
		int at = snprintf(buf, sizeof(buf), "/cloud/gpu={\"name\": "
				  "\"cpu-1t\", \"mem_bw_Bps\": %.6g, "
				  "\"fp16_flops\": %.6g, \"mem_bytes\": %.6g, "
				  "\"table\": \"%s/verify.json\"",
				  pe->stream_Bps, pe->peak_flops,
				  (double)sysconf(_SC_PHYS_PAGES) *
				  (double)sysconf(_SC_PAGESIZE), cdir);

		s[k++] = end_object(buf, sizeof(buf), at, p->wake_pause_s,
				    wake ? p->verify_wake_s : NULL);
	}
	*n = k;
	return s;
}

/* The simulator again, on the costs the run had: the profiles scaled by
 * the draft step measured in the run (the steps feeding one token) over
 * the profile's and by the run's verifier time over what the table
 * gives for the run's own iterations, with the run's two-token pass
 * (pdir/insitu/), into p->insitu. No wake tables: the run's mean costs
 * hold its passes after a pause already. */
static int simulate_insitu(const struct sweep *sw, size_t pt,
			   const struct cfg *c, const char *cdir,
			   const char *pdir, const struct val *v,
			   double step_prof, struct val_point *p, struct err *e)
{
	struct val_point q = { 0 };
	char dir[4500];
	char **extra;
	size_t nx;
	double pair_s = p->draft_pair_s > 0 ? p->draft_pair_s : -1;
	int r;

	p->draft_ratio = step_prof > 0 ? p->draft_step_s / step_prof : 1;
	snprintf(dir, sizeof(dir), "%.4400s/verify.json", cdir);
	p->verify_ratio = val_verify_ratio(pdir, dir, v->tm.name, e);
	snprintf(dir, sizeof(dir), "%.4400s/insitu", pdir);
	if (p->verify_ratio < 0 || fs_mkdirs(dir, e) < 0 ||
	    val_scaled_profiles(cdir, dir, p->draft_ratio, true, p->verify_ratio,
				"as in the run", e) < 0)
		return -1;
	extra = profile_sets(dir, pdir, c, v->tm.name, &v->edge, pair_s, p,
			     false, &nx);
	r = val_simulate(sw, pt, extra, nx, dir, &q, e);
	sweep_sets_free(extra, nx);
	p->insitu = q.sim;
	return r;
}

/* Text with every occurrence of from replaced by to. Caller frees. */
static char *replace_all(const char *text, const char *from, const char *to)
{
	size_t nf = strlen(from), nt = strlen(to), n = 0;
	const char *p;
	char *out, *q;

	for (p = text; (p = strstr(p, from)); p += nf)
		n++;
	out = q = xmalloc(strlen(text) + n * (nt > nf ? nt - nf : 0) + 1);
	for (p = text; *p;) {
		if (!strncmp(p, from, nf)) {
			memcpy(q, to, nt);
			q += nt;
			p += nf;
		} else {
			*q++ = *p++;
		}
	}
	*q = 0;
	return out;
}

/* A point's figures that its row of validate.csv and validate.json
 * show beside val_point's. */
struct row {
	size_t pt;
	const char *label;
	const struct val_point *p;
	double prof_s, pair_prof_s; /* the profile's step and pair it ran on */
	double demand;		    /* the edges' demand a CPU */
};

/* validate.csv's columns, in order: name, format, value (of struct row
 * *w and its struct val_point *p); the label, a quoted field, follows the
 * point. */
#define VALRUN_CSV(X) \
	X(itl_real_s, "%.6g", p->real.itl_s) \
	X(itl_sim_s, "%.6g", p->sim.itl_s) \
	X(itl_err, "%.4f", rel(p->sim.itl_s, p->real.itl_s)) \
	X(tokens_per_s_real, "%.6g", p->real.tokens_per_s) \
	X(tokens_per_s_sim, "%.6g", p->sim.tokens_per_s) \
	X(tokens_per_s_err, "%.4f", rel(p->sim.tokens_per_s, p->real.tokens_per_s)) \
	X(alpha_real, "%.4f", p->real.alpha) \
	X(alpha_sim, "%.4f", p->sim.alpha) \
	X(busy_real, "%.4f", p->real.busy) \
	X(busy_sim, "%.4f", p->sim.busy) \
	X(ttft_real_s, "%.6g", p->real.ttft_s) \
	X(ttft_sim_s, "%.6g", p->sim.ttft_s) \
	X(ttft_err, "%.4f", rel(p->sim.ttft_s, p->real.ttft_s)) \
	X(preemptions_real, "%.6g", p->real.preemptions) \
	X(preemptions_sim, "%.6g", p->sim.preemptions) \
	X(lossless, "%.0f", (double)!p->mismatched) \
	X(draft_step_real_s, "%.6g", p->draft_step_s) \
	X(draft_step_profile_s, "%.6g", w->prof_s) \
	X(draft_pair_real_s, "%.6g", p->draft_pair_s) \
	X(draft_pair_profile_s, "%.6g", w->pair_prof_s) \
	X(retime_draft_ratio, "%.4f", p->retime_draft) \
	X(retime_verify_ratio, "%.4f", p->retime_verify) \
	X(stack_s, "%.6g", p->stack_s) \
	X(edges_per_cpu, "%.3g", p->edges_per_cpu) \
	X(edges_spin, "%.0f", (double)p->edges_spin) \
	X(edge_demand_per_cpu, "%.3g", w->demand) \
	X(draft_ratio, "%.4f", p->draft_ratio) \
	X(verify_ratio, "%.4f", p->verify_ratio) \
	X(itl_err_in_situ, "%.4f", rel(p->insitu.itl_s, p->real.itl_s)) \
	X(tokens_per_s_err_in_situ, "%.4f", \
	  rel(p->insitu.tokens_per_s, p->real.tokens_per_s))

static void csv_head(FILE *f)
{
#define HEAD(name, fmt, v) fputs("," #name, f);
	fputs("point,label", f);
	VALRUN_CSV(HEAD)
#undef HEAD
	fputc('\n', f);
}

static void csv_row(FILE *f, const struct row *w)
{
	const struct val_point *p = w->p;

	fprintf(f, "%zu,", w->pt);
	sweep_csv_field(f, w->label);
#define CELL(name, fmt, v) fprintf(f, "," fmt, (double)(v));
	VALRUN_CSV(CELL)
#undef CELL
	fputc('\n', f);
}

static json_t *row_json(const struct row *w, bool within, bool within5,
			bool ttft5)
{
	const struct val_point *p = w->p;

	return json_pack(
		"{s:I,s:s,s:o,s:o,s:{s:f,s:f,s:f,s:f},s:{s:f,s:f,s:f},s:b,s:b,"
		"s:b,s:I,s:I,s:I,s:b,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:o,s:f,s:b,"
		"s:f,s:f,s:f}",
		"point", (json_int_t)w->pt, "label", w->label,
		"real", side_json(&p->real), "sim", side_json(&p->sim),
		"error", "itl", rel(p->sim.itl_s, p->real.itl_s),
		"tokens_per_s", rel(p->sim.tokens_per_s, p->real.tokens_per_s),
		"busy_fraction", rel(p->sim.busy, p->real.busy),
		"ttft", rel(p->sim.ttft_s, p->real.ttft_s),
		"in_situ", "itl", rel(p->insitu.itl_s, p->real.itl_s),
		"tokens_per_s", rel(p->insitu.tokens_per_s, p->real.tokens_per_s),
		"busy_fraction", rel(p->insitu.busy, p->real.busy),
		"within_10pct", within, "within_5pct", within5,
		"ttft_within_5pct", ttft5,
		"requests", (json_int_t)p->requests,
		"not_lossless", (json_int_t)p->mismatched,
		"protocol_errors", (json_int_t)p->errors,
		"lossless", !p->mismatched,
		"draft_step_s_real", p->draft_step_s,
		"draft_step_s_profile", w->prof_s,
		"draft_pair_s_real", p->draft_pair_s,
		"draft_pair_s_profile", w->pair_prof_s,
		"retime_draft_ratio", p->retime_draft,
		"retime_verify_ratio", p->retime_verify,
		"stack_s", p->stack_s, "wake", wake_json(p),
		"edges_per_cpu", p->edges_per_cpu, "edges_spin", p->edges_spin,
		"edge_demand_per_cpu", w->demand, "draft_ratio", p->draft_ratio,
		"verify_ratio", p->verify_ratio);
}

static void table_head(FILE *f)
{
	fprintf(f, "%-34s %23s  %23s  %23s  %11s  %11s  %-8s %s\n%-34s %7s %7s "
		"%7s  %7s %7s %7s  %7s %7s %7s  %5s %5s  %5s %5s  %8s %7s %7s\n",
		"point", "ITL ms", "tokens/s", "TTFT ms", "alpha", "cloud busy",
		"lossless", "in situ err", "", "real", "sim", "err", "real", "sim",
		"err", "real", "sim", "err", "real", "sim", "real", "sim", "", "ITL",
		"tok/s");
}

static void table_row(FILE *f, const char *label, const struct val_point *p)
{
	fprintf(f, "%-34s %7.2f %7.2f %+6.1f%%  %7.1f %7.1f %+6.1f%%  %7.2f %7.2f "
		"%+6.1f%%  %5.3f %5.3f  %5.3f %5.3f  %-3s  %+6.1f%% %+6.1f%%\n",
		label, 1e3 * p->real.itl_s, 1e3 * p->sim.itl_s,
		100 * rel(p->sim.itl_s, p->real.itl_s), p->real.tokens_per_s,
		p->sim.tokens_per_s,
		100 * rel(p->sim.tokens_per_s, p->real.tokens_per_s),
		1e3 * p->real.ttft_s, 1e3 * p->sim.ttft_s,
		100 * rel(p->sim.ttft_s, p->real.ttft_s),
		p->real.alpha, p->sim.alpha, p->real.busy, p->sim.busy,
		p->mismatched ? "NO" : "yes",
		100 * rel(p->insitu.itl_s, p->real.itl_s),
		100 * rel(p->insitu.tokens_per_s, p->real.tokens_per_s));
	fflush(f);
}

/* The validation under way: what every point shares. */
struct vrun {
	const struct valrun_opts *o;
	struct valrun_result *r;
	struct val v;
	struct sweep sw;
	struct od od;
	char tmp_abs[4096]; /* the folder being made, absolute */
	char cdir[4200];    /* its calib/ */
	char out_abs[4200]; /* the folder once in place, absolute */
	double step_prof;   /* the profile's draft step at a mean context */
	json_t *rows, *skipped, *failed; /* owned */
	FILE *csv;
};

/* Every point is one the deployment can run, with one prompt and output
 * length; the largest gamma and batch budget of them. */
static int check_points(const struct sweep *sw, int *gamma, int *budget,
			int *np, int *nout, struct err *e)
{
	for (size_t pt = 0; pt < sw->n_points; pt++) {
		struct cfg c;
		int pnp = 0, pnout = 0;
		int r = val_cfg_load(sw, pt, -1, NULL, 0, &c, e);

		if (r < 0)
			return -1;
		r = check_point(&c, &pnp, &pnout, e);
		if (r < 0)
			err_prefix(e, "%s: point %zu", sw->file, pt);
		for (size_t g = 0; g < c.n_groups; g++)
			if (c.groups[g].proto.gamma > *gamma)
				*gamma = c.groups[g].proto.gamma;
		if (c.cloud.max_batch_tokens > *budget)
			*budget = (int)c.cloud.max_batch_tokens;
		if (r == 0 && pt > 0 && (pnp != *np || pnout != *nout))
			r = err_set(e, "%s: every point needs the same prompt and "
				    "output lengths", sw->file);
		*np = pnp;
		*nout = pnout;
		cfg_release(&c);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* The point's resolved config, naming the profiles where they will be. */
static int write_config(struct vrun *x, size_t pt, char **extra, size_t nx,
			struct err *e)
{
	char name[64], *resolved, *fixed;
	struct cfg c;
	int r = val_cfg_load(&x->sw, pt, x->sw.seeds[0], extra, nx, &c, e);

	if (r < 0)
		return -1;
	resolved = cfg_resolved(&c);
	fixed = replace_all(resolved, x->tmp_abs, x->out_abs);
	snprintf(name, sizeof(name), "points/%zu/config.json", pt);
	r = od_write(&x->od, name, fixed, e);
	free(resolved);
	free(fixed);
	cfg_release(&c);
	return r;
}

/* A point that ran: its rows in validate.json, validate.csv, the table. */
static void record(struct vrun *x, const struct row *w)
{
	const struct val_point *p = w->p;
	double err_itl = fabs(rel(p->sim.itl_s, p->real.itl_s));
	double err_tps = fabs(rel(p->sim.tokens_per_s, p->real.tokens_per_s));
	bool within = err_itl <= VALRUN_CLOSE && err_tps <= VALRUN_CLOSE;
	bool within5 = err_itl <= VALRUN_TIGHT && err_tps <= VALRUN_TIGHT;
	bool ttft5 = fabs(rel(p->sim.ttft_s, p->real.ttft_s)) <= VALRUN_TIGHT;

	x->r->lossy += p->mismatched;
	x->r->close += within;
	x->r->tight += within5;
	x->r->ttft_tight += ttft5;
	json_array_append_new(x->rows, row_json(w, within, within5, ttft5));
	csv_row(x->csv, w);
	if (x->o->table)
		table_row(x->o->table, w->label, p);
}

/* Whether a point's edges share a CPU, each kept busy past the bound: it
 * is then listed, not run. */
static bool over_bound(struct vrun *x, const struct cfg *c, size_t pt,
		       const char *label, double demand)
{
	long long edges = 0;

	for (size_t g = 0; g < c->n_groups; g++)
		edges += c->groups[g].count;
	if (edges <= x->v.edge_cpus || demand <= x->o->edge_bound)
		return false;
	json_array_append_new(x->skipped, json_pack(
		"{s:I,s:s,s:f,s:i}", "point", (json_int_t)pt, "label", label,
		"edge_demand_per_cpu", demand, "edge_cpus", x->v.edge_cpus));
	if (x->o->table)
		fprintf(x->o->table, "%-34s not run: its edges would keep %.2f of "
			"each edge CPU busy (--edge-bound %.2f)\n", label, demand,
			x->o->edge_bound);
	return true;
}

/* One point: timed again, simulated on the profiles scaled to it, run for
 * real unless over the edge bound, simulated on the run's own costs,
 * recorded. */
static int point(struct vrun *x, size_t pt, const char *label,
		 struct err *e)
{
	struct val_point p = { 0 };
	struct row w = { .pt = pt, .p = &p, .label = label };
	char pdir[4400], rdir[4500], **extra;
	size_t nx;
	struct cfg c;
	int r;

	snprintf(pdir, sizeof(pdir), "%.4000s/points/%zu", x->tmp_abs, pt);
	snprintf(rdir, sizeof(rdir), "%.4400s/retimed", pdir);
	if (!x->v.quiet)
		fprintf(stderr, "validate: point %zu of %zu: %s\n", pt + 1,
			x->sw.n_points, label);
	if (x->o->retime)
		val_retime(&x->v, &p.retime_draft, &p.retime_verify);
	else
		p.retime_draft = p.retime_verify = 1;
	if (val_cfg_load(&x->sw, pt, x->sw.seeds[0], NULL, 0, &c, e) < 0)
		return -1;
	val_wake(&x->v, &c, &p);
	if (val_stack(&x->v, &c, &p.stack_s, e) < 0 || fs_mkdirs(rdir, e) < 0 ||
	    val_scaled_profiles(x->cdir, rdir, p.retime_draft, false,
				p.retime_verify, "timed again before the point",
				e) < 0) {
		cfg_release(&c);
		return -1;
	}
	extra = profile_sets(rdir, pdir, &c, x->v.tm.name, &x->v.edge, -1, &p,
			     true, &nx);
	w.prof_s = x->step_prof * p.retime_draft; /* the step it ran on */
	w.pair_prof_s = x->v.edge.draft_pair_s * p.retime_draft;
	r = val_accept_profile(&x->v, &c, pdir, x->o->prov, e);
	if (r == 0)
		r = val_simulate(&x->sw, pt, extra, nx, pdir, &p, e);
	w.demand = p.edge_demand / x->v.edge_cpus;
	if (r == 0 && over_bound(x, &c, pt, label, w.demand)) {
		cfg_release(&c);
		sweep_sets_free(extra, nx);
		return 0;
	}
	if (r == 0)
		r = val_deploy(&x->v, &c, pdir, x->o->timeout_s, &p, e);
	if (r == 0)
		r = simulate_insitu(&x->sw, pt, &c, rdir, pdir, &x->v, w.prof_s,
				    &p, e);
	cfg_release(&c);
	if (r == 0)
		r = write_config(x, pt, extra, nx, e);
	sweep_sets_free(extra, nx);
	if (r == 0)
		record(x, &w);
	return r;
}

/* The farm's task: point, one that fails recorded (validate.json's
 * failed, the table), its message naming the folder as it will be; -1
 * only when a signal stops the study. */
static int run_point(void *ctx, size_t pt, struct err *e)
{
	struct vrun *x = ctx;
	char label[512], *why;
	int r;

	sweep_point_label(&x->sw, pt, true, label, sizeof(label));
	r = rt_signal ? -1 : point(x, pt, label, e);
	if (rt_signal)
		return err_set(e, "stopped by signal %d", (int)rt_signal);
	if (r == 0)
		return 0;
	why = replace_all(e->msg, x->tmp_abs, x->out_abs);
	json_array_append_new(x->failed, json_pack("{s:I,s:s,s:s}", "point",
		(json_int_t)pt, "label", label, "why", why));
	if (x->o->table)
		fprintf(x->o->table, "%-34s failed: %s\n", label, why);
	free(why);
	x->r->failed++;
	return 0;
}

/* The folder readied: the profiles measured, the paths made absolute,
 * validate.csv begun. */
static int begin(struct vrun *x, int gamma, int budget, struct err *e)
{
	const char *out = x->r->out;

	if (od_begin(&x->od, out, "validate", x->o->replace || !x->o->out,
		     e) < 0)
		return -1; /* a folder that cannot be had: bad input, exit 2 */
	x->r->status = VALRUN_FAILED; /* from here, a measurement that fails */
	if (!realpath(x->od.tmp, x->tmp_abs))
		return err_set(e, "%s: %s", x->od.tmp, strerror(errno));
	snprintf(x->cdir, sizeof(x->cdir), "%.4000s/calib", x->tmp_abs);
	if (fs_mkdirs(x->cdir, e) < 0 ||
	    val_calibrate(&x->v, x->cdir, gamma, budget, x->o->prov, e) < 0)
		return -1;
	if (out[0] == '/') {
		snprintf(x->out_abs, sizeof(x->out_abs), "%.4000s", out);
	} else {
		char cwd[4096];

		if (!getcwd(cwd, sizeof(cwd)))
			cwd[0] = 0;
		snprintf(x->out_abs, sizeof(x->out_abs), "%.2000s/%.2000s", cwd,
			 out);
	}
	/* the profile's draft step at the mean context of a request */
	x->step_prof = x->v.edge.draft_base_s + x->v.edge.draft_per_ctx_s *
		       (x->v.np + x->v.nout / 2.0);
	if (!(x->csv = od_open(&x->od, "validate.csv", e)))
		return -1;
	csv_head(x->csv);
	if (x->o->table)
		table_head(x->o->table);
	return 0;
}

/* validate.json and the sweep written, the folder put in place. */
static int finish(struct vrun *x, const char *text, struct err *e)
{
	json_t *doc;
	char *sr;
	int rc;

	rc = fclose(x->csv);
	x->csv = NULL;
	if (rc != 0)
		return err_set(e, "%s: cannot write validate.csv", x->r->out);
	doc = json_pack("{s:s,s:s,s:s,s:s,s:O,s:I,s:I,s:I,s:O,s:f,s:O}", "name",
			x->sw.name, "target", x->o->target, "draft", x->o->draft,
			"text", text, "points", x->rows, "points_within_10pct",
			(json_int_t)x->r->close, "points_within_5pct",
			(json_int_t)x->r->tight, "points_ttft_within_5pct",
			(json_int_t)x->r->ttft_tight, "not_run", x->skipped,
			"edge_bound", x->o->edge_bound, "provenance", x->o->prov);
	json_object_set(doc, "failed", x->failed);
	x->r->json = jx_dumps(doc);
	json_decref(doc);
	sr = sweep_resolved(&x->sw);
	rc = od_write(&x->od, "validate.json", x->r->json, e) < 0 ||
	     od_write(&x->od, OD_MARKER, sr, e) < 0 || od_commit(&x->od, e) < 0
		     ? -1 : 0;
	free(sr);
	return rc;
}

static void run_points(struct vrun *x, const char *text, int gamma,
		       int budget, struct err *e)
{
	struct farm f = { .n_tasks = x->sw.n_points, .ctx = x, .run = run_point,
			  .label = "validate", .what = "points", .jobs = 1,
			  .in_process = true, .quiet = true, .size = 1 };
	struct farm_result fr;

	x->rows = json_array();
	x->skipped = json_array();
	x->failed = json_array();
	if (begin(x, gamma, budget, e) < 0 || rt_signal)
		return;
	farm_run(&f, &fr);
	if (fr.status) {
		if (fr.status < 128)
			err_set(e, "%s", fr.msg);
		return;
	}
	x->r->not_run = json_array_size(x->skipped);
	if (finish(x, text, e) < 0)
		return;
	x->r->written = true;
	x->r->status = x->r->lossy || x->r->failed ||
		       x->r->not_run == x->r->points ? VALRUN_FAILED
						     : VALRUN_LOSSLESS;
	if (x->r->lossy)
		err_set(e, "%ld requests were not lossless", x->r->lossy);
	else if (x->r->failed)
		err_set(e, "%zu of %zu points failed (validate.json's \"failed\" "
			"says why)", x->r->failed, x->r->points);
	else if (x->r->not_run == x->r->points)
		err_set(e, "none of the %zu points ran: each is over the edge "
			"bound (--edge-bound %g)", x->r->points, x->o->edge_bound);
}

void valrun_run(const struct valrun_opts *o, struct valrun_result *r,
		struct err *e)
{
	struct vrun x = { .o = o, .r = r };
	char textbuf[4096];
	const char *text = o->text;
	int gamma = 1, budget = 2, np = 0, nout = 0;

	*r = (struct valrun_result){ .status = VALRUN_BAD };
	if (sweep_load(&x.sw, o->sweep, e) < 0)
		return;
	r->points = x.sw.n_points;
	if (check_points(&x.sw, &gamma, &budget, &np, &nout, e) < 0) {
		sweep_release(&x.sw);
		return;
	}
	if (!text && !(text = mload_data_file("TinyStories-valid-excerpt.txt",
					      textbuf, sizeof(textbuf), e))) {
		sweep_release(&x.sw);
		return;
	}
	snprintf(r->out, sizeof(r->out), o->out ? "%s" : "results/runs/validate-%s",
		 o->out ? o->out : x.sw.name);
	if (!o->quiet)
		fprintf(stderr, "validate: loading %s and %s, the target's greedy "
			"continuations of the prompts\n", o->target, o->draft);
	if (val_init(&x.v, o->target, o->draft, text, np, nout, budget, e) < 0) {
		sweep_release(&x.sw);
		return;
	}
	x.v.quick = o->quick;
	x.v.quiet = o->quiet;
	x.v.edges_sleep = o->edges_sleep;
	rt_signals_catch();
	run_points(&x, text, gamma, budget, e);
	rt_signals_restore();
	if (x.csv)
		fclose(x.csv);
	od_abort(&x.od);
	if (rt_signal && !r->written) {
		r->status = 128 + rt_signal;
		err_set(e, "stopped by signal %d; nothing written", (int)rt_signal);
	}
	json_decref(x.rows);
	json_decref(x.skipped);
	json_decref(x.failed);
	val_release(&x.v);
	sweep_release(&x.sw);
}

void valrun_result_release(struct valrun_result *r)
{
	free(r->json);
	r->json = NULL;
}
