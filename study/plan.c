/* plan.c: the plan file, its candidates, and the search for the fewest
 * replicas of each.
 *
 * A candidate's index is a mixed-radix number over the axes (gpus, tps,
 * policies, protocols, gammas; the last fastest). The search keeps every
 * configuration it simulates; "meets" is monotone in the replicas only in
 * expectation, so the answer is checked where it matters: the count below
 * the answer was simulated and failed (or the answer is 1). */
#include "plan.h"

#include "cfg.h"
#include "cost.h"
#include "jx.h"
#include "mem.h"
#include "report.h"
#include "sweep.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The axes, in the order of a candidate's digits (the last fastest). */
enum { AX_GPU, AX_TP, AX_POLICY, AX_PROTOCOL, AX_GAMMA, N_AX };

static json_t *axis(const struct plan *p, int a)
{
	json_t *const ax[N_AX] = { p->gpus, p->tps, p->policies, p->protocols,
				   p->gammas };

	return ax[a];
}

/* The index of candidate c's value on axis a. */
static size_t digit(const struct plan *p, size_t c, int a)
{
	for (int k = N_AX - 1; k > a; k--)
		c /= json_array_size(axis(p, k));
	return c % json_array_size(axis(p, a));
}

static json_t *value(const struct plan *p, size_t c, int a)
{
	return json_array_get(axis(p, a), digit(p, c, a));
}

/* A GPU candidate is a preset name or a /cloud/gpu object; it keeps the
 * server's keys of the base it does not give. */
static json_t *gpu_object(const struct plan *p, const json_t *g)
{
	json_t *o = json_is_string(g) ? json_pack("{s:O}", "preset", g)
				      : json_deep_copy(g);

	json_object_update_missing(o, p->server);
	return o;
}

/* The base's server keys (struct plan's server), or -1 with e's message
 * when the base cannot be read. */
static int read_server(struct plan *p, struct err *e)
{
	static const char *const keys[] = { "tables", "pricing", "overhead_s",
					    NULL };
	json_t *doc = jx_load(p->base, e), *gpu;

	if (!doc)
		return err_prefix(e, "%s: /base", p->file);
	gpu = jx_at(doc, "/cloud/gpu");
	p->server = json_object();
	for (int i = 0; keys[i]; i++)
		if (json_object_get(gpu, keys[i]))
			json_object_set(p->server, keys[i],
					json_object_get(gpu, keys[i]));
	json_decref(doc);
	return 0;
}

/* A key of "set" against what the plan writes itself: the candidates'
 * pointers, the replicas and the SLO, and a key above one of them, are
 * refused (the plan's own would replace it unseen, or it the plan's); a
 * server key under /cloud/gpu (tables, pricing, overhead_s) goes with
 * every candidate GPU; any other GPU figure belongs to a candidate
 * object. 0, or -1 with e naming the key. */
static int set_owned(struct plan *p, const char *key, json_t *v,
		     struct err *e)
{
	static const char *const owned[][2] = {
		{ "/cloud/gpu", "/candidates/gpus" },
		{ "/cloud/tp", "/candidates/tps" },
		{ "/cloud/policy", "/candidates/policies" },
		{ "/protocol/kind", "/candidates/protocols" },
		{ "/protocol/gamma", "/candidates/gammas" },
		{ "/cloud/replicas", "the search" },
		{ "/slo/ttft_s", "/slo" }, { "/slo/tpot_s", "/slo" },
		{ "/slo", "/slo" },
	};
	static const char *const server[] = { "tables", "pricing", "overhead_s",
					      NULL };
	char cp[JX_PTR_MAX];

	for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++) {
		size_t n = strlen(owned[i][0]), nk = strlen(key);

		/* a key above one the plan sets replaces it too */
		if (nk < n && !strncmp(owned[i][0], key, nk) &&
		    owned[i][0][nk] == '/')
			return err_set(e, "%s: %s: sets the whole of %s, which "
				       "holds %s the plan sets itself (from %s): "
				       "set the keys below it one by one",
				       p->file, jx_child(cp, "/set", key),
				       *key ? key : "the config", owned[i][0],
				       owned[i][1]);
		if (strncmp(key, owned[i][0], n) || (key[n] && key[n] != '/'))
			continue;
		for (int k = 0; i == 0 && key[n] && server[k]; k++)
			if (!strcmp(key + n + 1, server[k])) {
				json_object_set(p->server, server[k], v);
				return 0;
			}
		return err_set(e, "%s: %s: the plan sets %s itself (from "
			       "%s): give it there%s", p->file,
			       jx_child(cp, "/set", key),
			       owned[i][0], owned[i][1], i == 0 ? " (a GPU "
			       "candidate may be an object: {\"preset\": ..., "
			       "\"usd_per_hour\": ...})" : "");
	}
	return 0;
}

/* A candidate GPU's name in messages and tables: a preset's, or an
 * object's name, else its preset, else "custom" */
static const char *gpu_label(const json_t *g)
{
	const char *s = json_is_string(g) ? json_string_value(g)
		: json_object_get(g, "name")
		? json_string_value(json_object_get(g, "name"))
		: json_string_value(json_object_get(g, "preset"));

	return s ? s : "custom";
}

static int read_axis(struct jx *x, json_t *cand, const char *key,
		     json_t *dflt, json_t **out)
{
	char cp[JX_PTR_MAX];
	json_t *v = json_object_get(cand, key);

	if (!v) {
		json_object_set_new(cand, key, dflt);
		v = dflt;
	} else {
		json_decref(dflt);
	}
	if (!json_is_array(v) || json_array_size(v) == 0)
		return jx_fail(x, jx_child(cp, "/candidates", key),
			       "a non-empty array", v);
	/* a value twice would search one candidate twice */
	if (jx_unique(x, v, jx_child(cp, "/candidates", key)) < 0)
		return -1;
	*out = v;
	return 0;
}

/* Every value of every axis, each with the base config, must load, and
 * every GPU must have a price: the search compares them by it. */
/* The base's groups as the fixed overrides leave them: what a load
 * scales. */
static int read_groups(struct plan *p, struct err *e)
{
	struct cfg cf;

	if (cfg_load_from(&cf, p->base, (const char *const *)p->set, p->n_set,
			  "the plan's set", e) < 0)
		return err_prefix(e, "%s: base", p->file);
	p->n_groups = cf.n_groups;
	p->warnings = cf.warnings ? xstrdup(cf.warnings) : NULL;
	p->arrival = xcalloc(cf.n_groups, sizeof(*p->arrival));
	p->count = xcalloc(cf.n_groups, sizeof(*p->count));
	p->rate_scale = xcalloc(cf.n_groups, sizeof(*p->rate_scale));
	for (size_t i = 0; i < cf.n_groups; i++) {
		p->arrival[i] = cf.groups[i].workload.arrival;
		p->count[i] = (double)cf.groups[i].count;
		p->rate_scale[i] = cf.groups[i].workload.arrival == ARRIVAL_TRACE
					   ? cf.groups[i].workload.trace_speed
					   : cf.groups[i].workload.rate.scale;
	}
	cfg_release(&cf);
	return 0;
}

/* Whether every group of cf (candidate c's config) runs the candidate's
 * protocol under the plan's SLO: a group's own protocol or SLO wins over
 * the config's, which the candidates set, so the plan would judge what it
 * did not run. 0, or -1 with e naming the group. */
static int groups_follow(const struct plan *p, const struct cfg *cf, size_t c,
			 struct err *e)
{
	const char *want = json_string_value(value(p, c, AX_PROTOCOL));

	for (size_t g = 0; g < cf->n_groups; g++) {
		const struct cfg_group *gr = &cf->groups[g];

		if (strcmp(cfg_proto_names[gr->proto.kind], want))
			return err_set(e, "%s: base: /tenants/%zu/protocol: the "
				       "group runs its own protocol (%s), not the "
				       "candidates' (%s): remove it from the group "
				       "for the plan", p->file, g,
				       cfg_proto_names[gr->proto.kind], want);
		if (gr->slo.ttft_s != p->ttft_s || gr->slo.tpot_s != p->tpot_s)
			return err_set(e, "%s: base: /tenants/%zu/slo: the group "
				       "has its own SLO (TTFT %g s, TPOT %g s), not "
				       "the plan's (%g s, %g s): remove it from the "
				       "group for the plan", p->file, g,
				       gr->slo.ttft_s, gr->slo.tpot_s, p->ttft_s,
				       p->tpot_s);
	}
	return 0;
}

/* Every candidate the search runs, with the base and set: it loads, its
 * groups follow it, its GPU has a price. A failure is blamed on the axis
 * value whose pointer the message names, else on the candidate. */
static int check_axes(const struct plan *p, struct err *e)
{
	static const char *const names[N_AX] = { "gpus", "tps", "policies",
		"protocols", "gammas" };
	static const char *const ptrs[N_AX] = { "/cloud/gpu", "/cloud/tp",
		"/cloud/policy", "/protocol/kind", "/protocol/gamma" };

	for (size_t c = 0; c < p->n_candidates; c++) {
		size_t n;
		char **sets, name[160];
		struct cfg cf;
		int rc;

		if (!plan_candidate_used(p, c))
			continue;
		plan_candidate_name(p, c, name, sizeof(name));
		sets = plan_sets(p, c, 1, 1, -1, &n);
		rc = cfg_load_from(&cf, p->base, (const char *const *)sets, n,
				   NULL, e);
		sweep_sets_free(sets, n);
		if (rc < 0) {
			for (int a = 0; a < N_AX; a++)
				if (strstr(e->msg, ptrs[a]))
					return err_prefix(e, "%s: /candidates/%s/%zu",
							  p->file, names[a],
							  digit(p, c, a));
			return err_prefix(e, "%s: candidate %s", p->file, name);
		}
		rc = groups_follow(p, &cf, c, e);
		if (!rc && !(cf.cloud.gpu.spec.usd_per_hour > 0))
			rc = err_set(e, "%s: /candidates/gpus/%zu: %s has no price "
				     "an hour: give it as {\"preset\": \"%s\", "
				     "\"usd_per_hour\": ...}", p->file,
				     digit(p, c, AX_GPU), cf.cloud.gpu.spec.name,
				     cf.cloud.gpu.spec.name);
		cfg_release(&cf);
		if (rc < 0)
			return -1;
	}
	return 0;
}

int plan_load(struct plan *p, const char *path, struct err *e)
{
	static const char *const keys[] = { "base", "set", "slo", "seeds",
		"candidates", "max_replicas", "rate", NULL };
	static const char *const rate_keys[] = { "replicas", "step", NULL };
	static const char *const slo_keys[] = { "ttft_s", "tpot_s",
		"attainment", NULL };
	static const char *const cand_keys[] = { "gpus", "tps", "policies",
		"protocols", "gammas", NULL };
	struct jx x = { .file = path, .err = e };
	json_t *slo, *cand, *set, *seeds, *rate, *v;
	const char *base, *key;
	char buf[1024];

	*p = (struct plan){ 0 };
	if (!(p->doc = jx_load(path, e)))
		return -1;
	p->file = xstrdup(path);
	if (jx_object(&x, p->doc, "", keys) < 0 ||
	    jx_str(&x, p->doc, "", "base", NULL, &base) < 0 ||
	    jx_int(&x, p->doc, "", "max_replicas", 1, 100000, 256,
		   &p->max_replicas) < 0)
		goto fail;
	p->base = xstrdup(jx_path(&x, base, buf, sizeof(buf)));
	if (read_server(p, e) < 0)
		goto fail;
	slo = json_object_get(p->doc, "slo");
	if (!json_is_object(slo)) {
		jx_fail(&x, "/slo", "an object with \"ttft_s\" and \"tpot_s\" "
			"(and \"attainment\", 0.99 if not given)", slo);
		goto fail;
	}
	if (jx_object(&x, slo, "/slo", slo_keys) < 0 ||
	    jx_num(&x, slo, "/slo", "ttft_s", JX_POS, JX_REQUIRED, &p->ttft_s) < 0 ||
	    jx_num(&x, slo, "/slo", "tpot_s", JX_POS, JX_REQUIRED, &p->tpot_s) < 0 ||
	    jx_num(&x, slo, "/slo", "attainment",
		   (struct jx_range){ 0, 1, true, false }, 0.99,
		   &p->attainment) < 0)
		goto fail;
	set = json_object_get(p->doc, "set");
	if (set && !json_is_object(set)) {
		jx_fail(&x, "/set", "an object of config pointers and values", set);
		goto fail;
	}
	p->set = xcalloc(json_object_size(set) + 1, sizeof(*p->set));
	json_object_foreach(set, key, v) {
		if (*key != '/' || !strcmp(key, "/seed")) {
			err_set(e, "%s: /set: \"%s\" is not a config pointer "
				"(the seeds are \"seeds\")", path, key);
			goto fail;
		}
		if (set_owned(p, key, v, e) < 0)
			goto fail;
		p->set[p->n_set++] = sweep_set_text(key, v);
	}
	seeds = json_object_get(p->doc, "seeds");
	if (!seeds)
		json_object_set_new(p->doc, "seeds",
				    seeds = json_pack("[i,i,i]", 1, 2, 3));
	if (!json_is_array(seeds) || json_array_size(seeds) == 0) {
		jx_fail(&x, "/seeds", "a non-empty array of integers >= 0", seeds);
		goto fail;
	}
	p->n_seeds = json_array_size(seeds);
	p->seeds = xcalloc(p->n_seeds, sizeof(*p->seeds));
	for (size_t i = 0; i < p->n_seeds; i++) {
		size_t j = 0;

		v = json_array_get(seeds, i);
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			jx_fail(&x, jx_index(buf, "/seeds", i), "an integer >= 0", v);
			goto fail;
		}
		p->seeds[i] = json_integer_value(v);
		/* a seed twice would count one run as two */
		while (j < i && p->seeds[j] != p->seeds[i])
			j++;
		if (j < i) {
			jx_fail(&x, jx_index(buf, "/seeds", i), "a seed not "
				"listed before", v);
			goto fail;
		}
	}
	cand = json_object_get(p->doc, "candidates");
	if (!cand) /* every axis its default */
		json_object_set_new(p->doc, "candidates", cand = json_object());
	if (!json_is_object(cand)) {
		jx_fail(&x, "/candidates", "an object of the axes (gpus, tps, "
			"policies, protocols, gammas)", cand);
		goto fail;
	}
	if (jx_object(&x, cand, "/candidates", cand_keys) < 0 ||
	    read_axis(&x, cand, "gpus", json_pack("[s]", GPU_PRESET_DEFAULT),
		      &p->gpus) < 0 ||
	    read_axis(&x, cand, "tps", json_pack("[i]", 1), &p->tps) < 0 ||
	    read_axis(&x, cand, "policies", json_pack("[s]", "continuous"),
		      &p->policies) < 0 ||
	    read_axis(&x, cand, "protocols", json_pack("[s]", "async"),
		      &p->protocols) < 0 ||
	    read_axis(&x, cand, "gammas", json_pack("[i]", 4), &p->gammas) < 0)
		goto fail;
	/* the GPUs told apart by their names, as the tables show them */
	for (size_t i = 1; i < json_array_size(p->gpus); i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(gpu_label(json_array_get(p->gpus, i)),
				    gpu_label(json_array_get(p->gpus, j)))) {
				char want[96];

				snprintf(want, sizeof(want), "a GPU named apart "
					 "from /candidates/gpus/%zu (give each a "
					 "\"name\")", j);
				jx_fail(&x, jx_index(buf, "/candidates/gpus", i),
					want, json_array_get(p->gpus, i));
				goto fail;
			}
	rate = json_object_get(p->doc, "rate");
	if (rate && (jx_object(&x, rate, "/rate", rate_keys) < 0 ||
		     jx_int(&x, rate, "/rate", "replicas", 1, p->max_replicas,
			    1, &p->rate_replicas) < 0 ||
		     jx_num(&x, rate, "/rate", "step",
			    (struct jx_range){ 0.001, 1, true, true }, 0.05,
			    &p->rate_step) < 0))
		goto fail;
	p->n_candidates = 1;
	for (int a = 0; a < N_AX; a++)
		p->n_candidates *= json_array_size(axis(p, a));
	if (read_groups(p, e) < 0 || check_axes(p, e) < 0)
		goto fail;
	return 0;
fail:
	plan_release(p);
	return -1;
}

void plan_release(struct plan *p)
{
	free(p->warnings);
	free(p->arrival);
	free(p->count);
	free(p->rate_scale);
	sweep_sets_free(p->set, p->n_set);
	free(p->seeds);
	free(p->base);
	json_decref(p->server);
	free(p->file);
	json_decref(p->doc);
	*p = (struct plan){ 0 };
}

/* The capabilities of a protocol by name (NULL: not one) */
static const struct proto_caps *caps_of(const char *protocol)
{
	int k = cfg_name_find(cfg_proto_names, protocol);

	return k >= 0 ? cfg_proto_caps((enum proto_kind)k) : NULL;
}

static bool drafts(const char *protocol)
{
	const struct proto_caps *c = caps_of(protocol);

	return c && cfg_proto_drafts(c);
}

bool plan_candidate_used(const struct plan *p, size_t c)
{
	return digit(p, c, AX_GAMMA) == 0 ||
	       drafts(json_string_value(value(p, c, AX_PROTOCOL)));
}

void plan_candidate_name(const struct plan *p, size_t c, char *buf, size_t n)
{
	const char *proto = json_string_value(value(p, c, AX_PROTOCOL));
	int len = snprintf(buf, n, "%s tp%g %s %s",
			   gpu_label(value(p, c, AX_GPU)),
			   json_number_value(value(p, c, AX_TP)),
			   json_string_value(value(p, c, AX_POLICY)), proto);

	if (drafts(proto) && len > 0 && (size_t)len < n)
		snprintf(buf + len, n - (size_t)len, " gamma %g",
			 json_number_value(value(p, c, AX_GAMMA)));
}

/* Group g's override at load times its base load, into s[*k]. */
static void load_set(const struct plan *p, size_t g, double load, char **s,
		     size_t *k)
{
	char ptr[96];
	json_t *v = NULL;

	switch (p->arrival[g]) { /* every kind: a new one is a compile error */
	case ARRIVAL_POISSON:
		snprintf(ptr, sizeof(ptr), "/tenants/%zu/workload/rate_scale", g);
		v = json_real(load * p->rate_scale[g]);
		break;
	case ARRIVAL_CLOSED:
		snprintf(ptr, sizeof(ptr), "/tenants/%zu/count", g);
		v = json_integer((json_int_t)fmax(1, round(load * p->count[g])));
		break;
	case ARRIVAL_TRACE:
		snprintf(ptr, sizeof(ptr), "/tenants/%zu/workload/trace_speed", g);
		v = json_real(load * p->rate_scale[g]);
		break;
	}
	s[(*k)++] = sweep_set_text(ptr, v);
	json_decref(v);
}

char **plan_sets(const struct plan *p, size_t c, long long replicas,
		 double load, long long seed, size_t *n)
{
	char **s = xcalloc(p->n_set + 11 + p->n_groups, sizeof(*s));
	json_t *g = gpu_object(p, value(p, c, AX_GPU)), *v = NULL,
	       *one = json_integer(1);
	const struct proto_caps *pc;
	size_t k = 0;

	for (; k < p->n_set; k++)
		s[k] = xstrdup(p->set[k]);
	s[k++] = sweep_set_text("/cloud/gpu", g);
	s[k++] = sweep_set_text("/cloud/tp", value(p, c, AX_TP));
	s[k++] = sweep_set_text("/cloud/policy", value(p, c, AX_POLICY));
	s[k++] = sweep_set_text("/protocol/kind", value(p, c, AX_PROTOCOL));
	/* a kind that drafts nothing takes the default gamma, one that
	 * keeps one block in flight a window of 1, whatever the base's: the
	 * config says what the candidate runs, and warns of nothing */
	pc = caps_of(json_string_value(value(p, c, AX_PROTOCOL)));
	s[k++] = sweep_set_text("/protocol/gamma", pc && cfg_proto_drafts(pc)
				? value(p, c, AX_GAMMA)
				: (v = json_integer(CFG_GAMMA_DEFAULT)));
	if (pc && !pc->windowed)
		s[k++] = sweep_set_text("/protocol/window", one);
	json_decref(v);
	json_decref(one);
	s[k++] = sweep_set_text("/cloud/replicas", v = json_integer(replicas));
	json_decref(v);
	s[k++] = sweep_set_text("/slo/ttft_s", v = json_real(p->ttft_s));
	json_decref(v);
	s[k++] = sweep_set_text("/slo/tpot_s", v = json_real(p->tpot_s));
	json_decref(v);
	if (seed >= 0) {
		s[k++] = sweep_set_text("/seed", v = json_integer(seed));
		json_decref(v);
	}
	for (size_t i = 0; load != 1 && i < p->n_groups; i++)
		load_set(p, i, load, s, &k);
	json_decref(g);
	*n = k;
	return s;
}

/* ---- the capacity bound ---- */

/* Requests a second a group makes at the least, if each met the SLO: a
 * closed-loop tenant asks again at most ttft + out x tpot + think after
 * asking; a Poisson one at its rate; a trace's rate is not bounded here. */
static double group_requests_per_s(const struct cfg_group *g,
				   const struct plan *p)
{
	const struct cfg_workload *w = &g->workload;
	double out = dist_mean(&w->output_tokens);

	if (w->arrival == ARRIVAL_POISSON)
		return (double)g->count * w->rate_per_s;
	if (w->arrival == ARRIVAL_CLOSED)
		return (double)g->count /
		       (p->ttft_s + out * p->tpot_s + dist_mean(&w->think_s));
	return 0;
}

long long plan_lower_bound(const struct plan *p, size_t c,
			   const char **pricing, struct err *e)
{
	size_t n;
	char **sets = plan_sets(p, c, 1, 1, -1, &n);
	struct cfg cf;
	struct cost k;
	struct cost_batch b;
	double tokens_per_s = 0, per_token_s, bytes, flops, bound;
	int rc = cfg_load_from(&cf, p->base, (const char *const *)sets, n,
			       NULL, e);

	sweep_sets_free(sets, n);
	if (rc < 0)
		return -1;
	for (size_t i = 0; i < cf.n_groups; i++) {
		const struct cfg_group *g = &cf.groups[i];

		/* a committed token is at least one token the target runs,
		 * and a prompt the cloud prefills its tokens */
		if (g->proto.caps.uses_cloud)
			tokens_per_s += group_requests_per_s(g, p) *
				(dist_mean(&g->workload.output_tokens) +
				 dist_mean(&g->workload.prompt_tokens));
	}
	cost_init(&k, &cf.cloud);
	*pricing = cost_pricing_kind(&k);
	b = (struct cost_batch){ .tokens = cf.cloud.max_batch_tokens, .seqs = 1,
				 .logits = 1 };
	per_token_s = cost_iter_s(&k, &b, &bytes, &flops) / (double)b.tokens;
	cfg_release(&cf);
	bound = ceil(tokens_per_s * per_token_s);
	return bound < 1 ? 1 : bound > (double)p->max_replicas ? p->max_replicas
							       : (long long)bound;
}

/* ---- simulating a configuration ---- */

#define PLATEAU 0.002

static double num_at(const json_t *sum, const char *ptr)
{
	return json_number_value(jx_at((json_t *)sum, ptr));
}

static int evaluate(const struct plan *p, size_t c, long long replicas,
		    double load, struct plan_point *pt, struct err *e)
{
	double *att = xcalloc(p->n_seeds, sizeof(*att)), ci;
	bool steady = true;
	int rc = 0;

	*pt = (struct plan_point){ .candidate = c, .replicas = replicas,
				   .load = load };
	for (size_t i = 0; i < p->n_seeds && rc == 0; i++) {
		size_t n;
		char **sets = plan_sets(p, c, replicas, load, p->seeds[i], &n);
		struct cfg cf;
		json_t *sum = NULL;

		rc = cfg_load_from(&cf, p->base, (const char *const *)sets, n,
				   NULL, e);
		sweep_sets_free(sets, n);
		if (rc < 0)
			break;
		if (!(sum = rep_simulate(&cf, e))) {
			cfg_release(&cf);
			rc = -1;
			break;
		}
		pt->usd_per_hour = (double)replicas * cf.cloud.tp *
				   cf.cloud.gpu.spec.usd_per_hour;
		att[i] = num_at(sum, "/all/slo_attainment");
		pt->ttft_attain += num_at(sum, "/all/ttft_attainment") / p->n_seeds;
		pt->tpot_attain += num_at(sum, "/all/tpot_attainment") / p->n_seeds;
		pt->tpot_p99_s += num_at(sum, "/all/tpot_quantiles_s/p99") /
				  p->n_seeds;
		/* a token's cost over the steady window where there is one */
		steady &= json_is_true(jx_at(sum, "/steady/steady"));
		pt->usd_per_mtok += num_at(sum, json_is_true(jx_at(sum,
			"/steady/steady")) ? "/steady/usd_per_mtok"
					    : "/all/usd_per_mtok") / p->n_seeds;
		pt->requests_per_s += num_at(sum, "/all/requests") /
			fmax(1e-9, num_at(sum, "/sim_time_s") - cf.warmup_s) /
			p->n_seeds;
		json_decref(sum);
		cfg_release(&cf);
	}
	if (rc == 0) {
		pt->steady = steady;
		sweep_stats(att, p->n_seeds, &pt->attain_mean, &ci);
		pt->attain_ci95 = ci;
		pt->meets = pt->attain_mean - ci >= p->attainment;
	}
	free(att);
	return rc;
}

static int probe(const struct plan *p, size_t c, long long replicas,
		 double load, struct plan_search *r, struct plan_point *out,
		 struct err *e)
{
	for (size_t i = 0; i < r->n_points; i++)
		if (r->points[i].replicas == replicas &&
		    r->points[i].load == load) {
			*out = r->points[i];
			return 0;
		}
	if (evaluate(p, c, replicas, load, out, e) < 0)
		return -1;
	r->points = xrealloc(r->points, (r->n_points + 1) * sizeof(*r->points));
	r->points[r->n_points++] = *out;
	if (!r->best.replicas || out->attain_mean > r->best.attain_mean)
		r->best = *out;
	return 0;
}

int plan_search_run(const struct plan *p, size_t c, struct plan_search *r,
		    struct err *e)
{
	struct plan_point pt;
	long long lo = 0, hi; /* lo fails (0: none seen), hi meets */

	*r = (struct plan_search){ 0 };
	if ((r->lower_bound = plan_lower_bound(p, c, &r->pricing, e)) < 0)
		return -1;
	hi = r->lower_bound;
	/* up by doubling from the bound until one meets; stop when twice the
	 * replicas gain less than PLATEAU of attainment, of the TTFT share and
	 * of the TPOT share (the SLO is bound by something else: the edge,
	 * the WAN; a joint attainment of 0 can hide shares that still grow) */
	for (;;) {
		double before = r->best.attain_mean;
		const struct plan_point *prev;

		if (probe(p, c, hi, 1, r, &pt, e) < 0)
			return -1;
		if (pt.meets)
			break;
		lo = hi;
		prev = r->n_points > 1 ? &r->points[r->n_points - 2] : NULL;
		r->plateau = prev && pt.attain_mean - before < PLATEAU &&
			     pt.ttft_attain - prev->ttft_attain < PLATEAU &&
			     pt.tpot_attain - prev->tpot_attain < PLATEAU;
		if (hi >= p->max_replicas || r->plateau)
			return 0; /* none: r->best says how close it came */
		hi = 2 * hi < p->max_replicas ? 2 * hi : p->max_replicas;
	}
	/* down from a bound that already meets, until one fails */
	while (lo == 0 && hi > 1) {
		if (probe(p, c, hi - 1, 1, r, &pt, e) < 0)
			return -1;
		if (!pt.meets)
			lo = hi - 1;
		else
			hi--;
	}
	/* bisect (lo, hi] */
	while (hi - lo > 1) {
		long long mid = lo + (hi - lo) / 2;

		if (probe(p, c, mid, 1, r, &pt, e) < 0)
			return -1;
		if (pt.meets)
			hi = mid;
		else
			lo = mid;
	}
	r->replicas = hi;
	for (size_t i = 0; i < r->n_points; i++) {
		if (r->points[i].replicas == hi)
			r->best = r->points[i];
		if (r->points[i].replicas == hi - 1)
			r->below = r->points[i];
	}
	return 0;
}

#define RATE_FLOOR (1.0 / 1024) /* of the base's load: below, none */

double plan_rate_floor(const struct plan *p)
{
	double most = 0;

	/* closed loops only: below one tenant a group (rounded) the load
	 * no longer falls */
	for (size_t g = 0; g < p->n_groups; g++) {
		if (p->arrival[g] != ARRIVAL_CLOSED)
			return RATE_FLOOR;
		most = fmax(most, p->count[g]);
	}
	return most > 0 ? fmax(RATE_FLOOR, 1 / most) : RATE_FLOOR;
}

/* The rate search's bracket: the highest load seen to meet the SLO and
 * the lowest seen to fail (0: none yet), with their points. */
struct rate_bracket {
	double lo, hi;
	struct plan_point lo_pt, hi_pt;
};

/* Simulates load (at the rate question's replicas) into the bracket. */
static int rate_probe(const struct plan *p, size_t c, double load,
		      struct plan_search *r, struct rate_bracket *b, struct err *e)
{
	struct plan_point pt;

	if (probe(p, c, p->rate_replicas, load, r, &pt, e) < 0)
		return -1;
	if (pt.meets) {
		b->lo = load;
		b->lo_pt = pt;
	} else {
		b->hi = load;
		b->hi_pt = pt;
	}
	return 0;
}

int plan_rate_search(const struct plan *p, size_t c, struct plan_search *r,
		     struct err *e)
{
	struct rate_bracket b = { 0 };

	*r = (struct plan_search){ .replicas = p->rate_replicas };
	if (plan_lower_bound(p, c, &r->pricing, e) < 0)
		return -1;
	for (double load = 1;; load = b.lo > 0 ? 2 * load : load / 2) {
		if (rate_probe(p, c, load, r, &b, e) < 0)
			return -1;
		if (b.lo > 0 && b.hi > 0)
			break;
		if (b.hi > 0 && load <= plan_rate_floor(p) * (1 + 1e-9))
			return 0; /* none: r->best says how close it came */
		if (b.lo > 0 && load >= 1 / RATE_FLOOR)
			break; /* the load no longer binds */
	}
	/* bisect (lo, hi) geometrically until hi is within 1 + step */
	while (b.hi > 0 && b.hi > b.lo * (1 + p->rate_step))
		if (rate_probe(p, c, sqrt(b.lo * b.hi), r, &b, e) < 0)
			return -1;
	r->load = b.lo;
	r->best = b.lo_pt;
	r->above = b.hi_pt;
	return 0;
}

void plan_search_release(struct plan_search *r)
{
	free(r->points);
	*r = (struct plan_search){ 0 };
}

/* ---- points as JSON, the front ---- */

json_t *plan_point_json(const struct plan *p, const struct plan_point *pt)
{
	char name[256];

	plan_candidate_name(p, pt->candidate, name, sizeof(name));
	json_t *o = json_pack("{s:s,s:I,s:I,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,"
			 "s:b}",
			 "candidate", name, "index", (json_int_t)pt->candidate,
			 "replicas", (json_int_t)pt->replicas,
			 "usd_per_hour", pt->usd_per_hour,
			 "attainment", pt->attain_mean,
			 "attainment_ci95", pt->attain_ci95,
			 "ttft_attainment", pt->ttft_attain,
			 "tpot_attainment", pt->tpot_attain,
			 "tpot_p99_s", pt->tpot_p99_s,
			 "usd_per_mtok", isfinite(pt->usd_per_mtok) ?
				 pt->usd_per_mtok : -1,
			 "load", pt->load, "requests_per_s", pt->requests_per_s,
			 "meets", pt->meets);
	json_object_set_new(o, "usd_per_mtok_over", json_string(
		pt->steady ? "the steady window" : "the whole run"));
	return o;
}

int plan_point_read(const json_t *j, struct plan_point *pt)
{
	json_int_t cand, rep;
	const char *over;
	int meets;

	*pt = (struct plan_point){ 0 };
	if (json_unpack((json_t *)j, "{s:I,s:I,s:F,s:F,s:F,s:F,s:F,s:F,s:F,s:F,"
			"s:F,s:b}",
			"index", &cand, "replicas", &rep, "usd_per_hour",
			&pt->usd_per_hour, "attainment", &pt->attain_mean,
			"attainment_ci95", &pt->attain_ci95, "ttft_attainment",
			&pt->ttft_attain, "tpot_attainment", &pt->tpot_attain,
			"tpot_p99_s", &pt->tpot_p99_s, "usd_per_mtok",
			&pt->usd_per_mtok, "load", &pt->load, "requests_per_s",
			&pt->requests_per_s, "meets", &meets) < 0)
		return -1;
	pt->candidate = (size_t)cand;
	pt->replicas = rep;
	pt->meets = meets;
	over = json_string_value(json_object_get(j, "usd_per_mtok_over"));
	pt->steady = over && !strcmp(over, "the steady window");
	return 0;
}

void plan_pareto(const struct plan_point *pts, size_t n, bool *pareto)
{
	for (size_t i = 0; i < n; i++) {
		pareto[i] = pts[i].meets;
		for (size_t j = 0; j < n && pareto[i]; j++) {
			bool no_worse = pts[j].usd_per_hour <= pts[i].usd_per_hour &&
					pts[j].tpot_p99_s <= pts[i].tpot_p99_s;
			bool better = pts[j].usd_per_hour < pts[i].usd_per_hour ||
				      pts[j].tpot_p99_s < pts[i].tpot_p99_s;

			if (j != i && pts[j].meets && no_worse && better)
				pareto[i] = false;
		}
	}
}
