/* cfg.c: the schema of a simulation config.
 *
 * One reader per object of the schema; each checks the object's keys, then
 * reads its values with jx (which writes defaults into the document). The
 * top-level "protocol" is the default of every group: a group without its own
 * gets a copy, so the resolved document states each group's protocol. */
#include "cfg.h"

#include "gpu.h"
#include "prof.h"
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROTO_NAME(kind, name, ...) name,
#define PROTO_CAPS(kind, name, edge, cloud, spec, win) { edge, cloud, spec, win },
const char *const cfg_proto_names[] = { PROTO_LIST(PROTO_NAME) NULL };
static const struct proto_caps proto_caps[] = { PROTO_LIST(PROTO_CAPS) };
#undef PROTO_NAME
#undef PROTO_CAPS

#define SCHED_NAME(policy, name, ...) name,
#define SCHED_DEPLOYED(policy, name, deployed, ...) deployed,
const char *const cfg_sched_names[] = { SCHED_LIST(SCHED_NAME) NULL };
static const bool sched_deployed[] = { SCHED_LIST(SCHED_DEPLOYED) };
#undef SCHED_NAME
#undef SCHED_DEPLOYED

const struct proto_caps *cfg_proto_caps(enum proto_kind k)
{
	HS_ASSERT(k < PROTO_N);
	return &proto_caps[k];
}

bool cfg_sched_deployed(enum sched_policy p)
{
	HS_ASSERT(p < SCHED_N);
	return sched_deployed[p];
}

int cfg_name_find(const char *const *names, const char *name)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

static int read_protocol(struct jx *x, json_t *v, const char *p,
			 struct cfg_protocol *out)
{
	static const char *const keys[] = { "kind", "gamma", "window", NULL };
	long long gamma, window;
	int kind;

	if (jx_object(x, v, p, keys) < 0 ||
	    jx_enum(x, v, p, "kind", cfg_proto_names, NULL, &kind) < 0 ||
	    jx_int(x, v, p, "gamma", 1, 64, 4, &gamma) < 0 ||
	    jx_int(x, v, p, "window", 1, 1024,
		   cfg_proto_caps((enum proto_kind)kind)->windowed ? 4 : 1,
		   &window) < 0)
		return -1;
	out->kind = (enum proto_kind)kind;
	out->caps = *cfg_proto_caps(out->kind);
	out->gamma = (int)gamma;
	out->window = out->caps.windowed ? (int)window : 1;
	return 0;
}

/* A path in the document, checked to be readable, replaced in the document
 * by its resolved form and returned borrowed from it. */
static int read_file_key(struct jx *x, json_t *v, const char *p,
			 const char *key, const char **out);

/* The device's four costs; a profile (`calib cpu`) gives their defaults. */
static int read_device(struct jx *x, json_t *v, const char *p,
		       struct cfg_device *out)
{
	static const char *const keys[] = { "profile", "draft_base_s",
		"draft_per_ctx_s", "prefill_base_s", "prefill_per_token_s",
		NULL };
	struct prof_edge pe = { .draft_base_s = JX_REQUIRED,
				.prefill_per_token_s = JX_REQUIRED };
	json_t *profile;

	out->profile = NULL;
	out->vocab = 0;
	if (jx_object(x, v, p, keys) < 0)
		return -1;
	/* a profile file, or one given inline (as calib check gives its own) */
	if ((profile = json_object_get(v, "profile"))) {
		if (!json_is_object(profile) &&
		    read_file_key(x, v, p, "profile", &out->profile) < 0)
			return -1;
		if ((out->profile ? prof_edge_load(out->profile, &pe, x->err)
				  : prof_edge_parse(profile, "the inline profile",
						    &pe, x->err)) < 0)
			return err_prefix(x->err, "%s: %s/profile", x->file, p);
		out->vocab = pe.vocab;
	}
	return jx_num(x, v, p, "draft_base_s", JX_POS, pe.draft_base_s,
		      &out->draft_base_s) < 0 ||
	       jx_num(x, v, p, "draft_per_ctx_s", JX_NONNEG, pe.draft_per_ctx_s,
		      &out->draft_per_ctx_s) < 0 ||
	       jx_num(x, v, p, "prefill_base_s", JX_NONNEG, pe.prefill_base_s,
		      &out->prefill_base_s) < 0 ||
	       jx_num(x, v, p, "prefill_per_token_s", JX_NONNEG,
		      pe.prefill_per_token_s, &out->prefill_per_token_s) < 0
		       ? -1 : 0;
}

static int read_file_key(struct jx *x, json_t *v, const char *p,
			 const char *key, const char **out)
{
	char path[1024], cp[JX_PTR_MAX];
	const char *s;
	FILE *f;

	if (jx_str(x, v, p, key, NULL, &s) < 0)
		return -1;
	jx_path(x, s, path, sizeof(path));
	if (!(f = fopen(path, "r")))
		return err_set(x->err, "%s: %s: cannot read '%s'", x->file,
			       jx_child(cp, p, key), path);
	fclose(f);
	json_object_set_new(v, key, json_string(path));
	*out = json_string_value(json_object_get(v, key));
	return 0;
}

static int read_workload(struct jx *x, json_t *v, const char *p,
			 struct cfg_workload *out)
{
	static const char *const keys[] = { "arrival", "requests", "rate_per_s",
		"prompt_tokens", "output_tokens", "think_s", "start_s", "trace",
		NULL };
	static const char *const arrivals[] = { "closed", "poisson", "trace",
						NULL };
	int arrival;

	if (jx_object(x, v, p, keys) < 0 ||
	    jx_enum(x, v, p, "arrival", arrivals, "closed", &arrival) < 0)
		return -1;
	out->arrival = (enum arrival_kind)arrival;
	if (out->arrival == ARRIVAL_TRACE)
		return read_file_key(x, v, p, "trace", &out->trace);
	return jx_int(x, v, p, "requests", 1, LLONG_MAX, 1, &out->requests) < 0 ||
	       (out->arrival == ARRIVAL_POISSON &&
		jx_num(x, v, p, "rate_per_s", JX_POS, JX_REQUIRED,
		       &out->rate_per_s) < 0) ||
	       dist_read(x, v, p, "prompt_tokens", JX_POS, NULL,
			 &out->prompt_tokens) < 0 ||
	       dist_read(x, v, p, "output_tokens", JX_POS, NULL,
			 &out->output_tokens) < 0 ||
	       dist_read(x, v, p, "think_s", JX_NONNEG, "0", &out->think_s) < 0 ||
	       dist_read(x, v, p, "start_s", JX_NONNEG, "0", &out->start_s) < 0
		       ? -1 : 0;
}

/* An acceptance profile (`calib accept`) makes the trace model and its bits
 * file, or the iid model and its alpha, the defaults. */
static int read_accept(struct jx *x, json_t *v, const char *p,
		       struct cfg_accept *out)
{
	static const char *const models[] = { "iid", "trace", "markov", NULL };
	static const char *const keys[][5] = {
		[ACCEPT_IID] = { "model", "alpha", "profile" },
		[ACCEPT_TRACE] = { "model", "file", "profile" },
		[ACCEPT_MARKOV] = { "model", "p_after_accept", "p_after_reject" },
	};
	struct prof_accept pa = { .alpha = JX_REQUIRED };
	const char *profile = NULL;
	int model;

	if (!json_is_object(v))
		return jx_fail(x, p, "an object", v);
	if (json_object_get(v, "profile")) {
		if (read_file_key(x, v, p, "profile", &profile) < 0)
			return -1;
		if (prof_accept_load(profile, &pa, x->err) < 0)
			return err_prefix(x->err, "%s: %s/profile", x->file, p);
	}
	if (jx_enum(x, v, p, "model", models, profile ? "trace" : "iid",
		    &model) < 0 ||
	    jx_object(x, v, p, keys[model]) < 0)
		return -1;
	out->model = (enum accept_model)model;
	switch (out->model) {
	case ACCEPT_IID:
		if (jx_num(x, v, p, "alpha", JX_UNIT, pa.alpha, &out->alpha) < 0)
			return -1;
		if (profile && !json_object_get(v, "alpha"))
			snprintf(out->source, sizeof(out->source), "iid at the alpha "
				 "of %.200s", pa.source);
		else
			snprintf(out->source, sizeof(out->source), "iid, alpha %g",
				 out->alpha);
		return 0;
	case ACCEPT_TRACE:
		if (profile && !json_object_get(v, "file")) {
			/* resolved against the profile's folder, and read */
			json_object_set_new(v, "file", json_string(pa.bits));
			out->trace = json_string_value(json_object_get(v, "file"));
			memcpy(out->source, pa.source, sizeof(out->source));
			return 0;
		}
		if (read_file_key(x, v, p, "file", &out->trace) < 0)
			return -1;
		snprintf(out->source, sizeof(out->source), "the bits of %s",
			 strrchr(out->trace, '/') ? strrchr(out->trace, '/') + 1
						  : out->trace);
		return 0;
	case ACCEPT_MARKOV:
		if (jx_num(x, v, p, "p_after_accept", JX_UNIT, JX_REQUIRED,
			   &out->p_after_acc) < 0 ||
		    jx_num(x, v, p, "p_after_reject", JX_UNIT, JX_REQUIRED,
			   &out->p_after_rej) < 0)
			return -1;
		snprintf(out->source, sizeof(out->source), "markov, %g after an "
			 "accept, %g after a reject", out->p_after_acc,
			 out->p_after_rej);
		return 0;
	}
	return 0;
}

static int read_wan(struct jx *x, json_t *v, const char *p, struct cfg_wan *out)
{
	static const char *const keys[] = { "rtt_s", "up_bps", "down_bps",
		"loss", "rto_s", "header_bytes", NULL };

	return jx_object(x, v, p, keys) < 0 ||
	       dist_read(x, v, p, "rtt_s", JX_POS, NULL, &out->rtt_s) < 0 ||
	       jx_num(x, v, p, "up_bps", JX_POS, 20e6, &out->up_bps) < 0 ||
	       jx_num(x, v, p, "down_bps", JX_POS, 50e6, &out->down_bps) < 0 ||
	       jx_num(x, v, p, "loss", (struct jx_range){ 0, 1, false, true }, 0,
		      &out->loss) < 0 ||
	       jx_num(x, v, p, "rto_s", JX_POS, 0.2, &out->rto_s) < 0 ||
	       jx_int(x, v, p, "header_bytes", 0, 65535, 66,
		      &out->header_bytes) < 0 ? -1 : 0;
}

static void group_release(struct cfg_group *g)
{
	dist_release(&g->workload.prompt_tokens);
	dist_release(&g->workload.output_tokens);
	dist_release(&g->workload.think_s);
	dist_release(&g->workload.start_s);
	dist_release(&g->wan.rtt_s);
	acc_trace_release(&g->acc_trace);
	wl_trace_release(&g->wl_trace);
}

static json_t *object_or_new(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	if (!v) {
		v = json_object();
		json_object_set_new(obj, key, v);
	}
	return v;
}

static int read_group(struct jx *x, json_t *v, const char *p,
		      const json_t *def_proto, size_t index,
		      struct cfg_group *g)
{
	static const char *const keys[] = { "name", "count", "protocol",
		"device", "workload", "acceptance", "wan", NULL };
	char cp[JX_PTR_MAX], name[32];
	json_t *proto;

	snprintf(name, sizeof(name), "group%zu", index);
	if (jx_object(x, v, p, keys) < 0 ||
	    jx_str(x, v, p, "name", name, &g->name) < 0 ||
	    jx_int(x, v, p, "count", 1, 100000000, 1, &g->count) < 0)
		return -1;
	if (!(proto = json_object_get(v, "protocol")))
		json_object_set_new(v, "protocol",
				    proto = json_deep_copy(def_proto));
	if (read_protocol(x, proto, jx_child(cp, p, "protocol"), &g->proto) < 0)
		return -1;
	if (g->proto.caps.uses_edge || json_object_get(v, "device")) {
		json_t *dev = json_object_get(v, "device");

		jx_child(cp, p, "device");
		if (!dev)
			return jx_fail(x, cp, "a device profile for the edge "
				       "model", NULL);
		if (read_device(x, dev, cp, &g->device) < 0)
			return -1;
	}
	if (read_workload(x, object_or_new(v, "workload"),
			  jx_child(cp, p, "workload"), &g->workload) < 0 ||
	    read_wan(x, object_or_new(v, "wan"), jx_child(cp, p, "wan"),
		     &g->wan) < 0)
		return -1;
	if (g->workload.arrival == ARRIVAL_TRACE &&
	    wl_trace_load(&g->wl_trace, g->workload.trace, x->err) < 0)
		return err_prefix(x->err, "%s: %s/workload/trace", x->file, p);
	/* acceptance matters only where drafts are verified */
	if (!g->proto.caps.speculates && !json_object_get(v, "acceptance"))
		return 0;
	if (read_accept(x, object_or_new(v, "acceptance"),
			jx_child(cp, p, "acceptance"), &g->accept) < 0)
		return -1;
	if (g->accept.model == ACCEPT_TRACE &&
	    acc_trace_load(&g->acc_trace, g->accept.trace, x->err) < 0)
		return err_prefix(x->err, "%s: %s/acceptance/file", x->file, p);
	return 0;
}

static int read_gpu(struct jx *x, json_t *v, const char *p, struct cfg_gpu *out)
{
	static const char *const keys[] = { "preset", "eta_bw", "eta_flops",
		"overhead_s", "table", NULL };
	int preset;

	out->table = NULL;
	if (jx_object(x, v, p, keys) < 0 ||
	    jx_enum(x, v, p, "preset", gpu_preset_names(), "H100-SXM",
		    &preset) < 0 ||
	    jx_num(x, v, p, "eta_bw", (struct jx_range){ 0, 1, true, false },
		   0.8, &out->eta_bw) < 0 ||
	    jx_num(x, v, p, "eta_flops", (struct jx_range){ 0, 1, true, false },
		   0.6, &out->eta_flops) < 0 ||
	    jx_num(x, v, p, "overhead_s", JX_NONNEG, 0.0005,
		   &out->overhead_s) < 0)
		return -1;
	out->preset = gpu_preset_names()[preset];
	/* a table given inline is read with the model, in read_cloud */
	if (json_object_get(v, "table") &&
	    !json_is_object(json_object_get(v, "table")))
		return read_file_key(x, v, p, "table", &out->table);
	return 0;
}

static int read_cloud(struct jx *x, json_t *v, const char *p,
		      struct cfg_cloud *out)
{
	static const char *const keys[] = { "replicas", "router", "policy",
		"max_batch_tokens", "prefill_chunk_tokens", "window_s",
		"kv_capacity_tokens", "model", "weight_bytes", "gpu", NULL };
	static const char *const routers[] = { "round_robin", "least_loaded",
					       NULL };
	const struct gpu_preset *gp;
	json_t *table;
	char cp[JX_PTR_MAX];
	double free_bytes;
	int router, policy, model;

	if (jx_object(x, v, p, keys) < 0 ||
	    jx_int(x, v, p, "replicas", 1, 1000000, 1, &out->replicas) < 0 ||
	    jx_enum(x, v, p, "router", routers, "round_robin", &router) < 0 ||
	    jx_enum(x, v, p, "policy", cfg_sched_names, "continuous",
		    &policy) < 0 ||
	    jx_int(x, v, p, "max_batch_tokens", 1, 1 << 24, 4096,
		   &out->max_batch_tokens) < 0 ||
	    jx_int(x, v, p, "prefill_chunk_tokens", 1, 1 << 24, 512,
		   &out->prefill_chunk_tokens) < 0 ||
	    jx_num(x, v, p, "window_s", JX_NONNEG, 0.002, &out->window_s) < 0 ||
	    jx_enum(x, v, p, "model", shape_names(), "llama2-7b", &model) < 0 ||
	    jx_num(x, v, p, "weight_bytes", JX_POS, 2, &out->weight_bytes) < 0 ||
	    read_gpu(x, object_or_new(v, "gpu"), jx_child(cp, p, "gpu"),
		     &out->gpu) < 0)
		return -1;
	out->router = (enum router_kind)router;
	out->policy = (enum sched_policy)policy;
	out->model = shape_find(shape_names()[model]);
	/* the table, a file (read_gpu resolved its path) or given inline */
	table = json_object_get(json_object_get(v, "gpu"), "table");
	if ((out->gpu.table || json_is_object(table)) &&
	    (out->gpu.table ? vtab_load(&out->gpu.vtab, out->gpu.table,
					out->model->name, x->err)
			    : vtab_parse(&out->gpu.vtab, table, "the inline table",
					 out->model->name, x->err)) < 0)
		return err_prefix(x->err, "%s: %s/gpu/table", x->file, p);
	/* default KV capacity: what device memory holds beside the weights,
	 * FP16 K and V */
	gp = gpu_preset_find(out->gpu.preset);
	free_bytes = gp->mem_bytes - shape_params(out->model) * out->weight_bytes;
	if (free_bytes < 0)
		free_bytes = 0;
	return jx_int(x, v, p, "kv_capacity_tokens", 1, LLONG_MAX,
		      (long long)(free_bytes /
				  (2 * shape_kv_elems_per_token(out->model))) + 1,
		      &out->kv_capacity_tokens);
}

static int read_top(struct cfg *c, struct jx *x)
{
	static const char *const keys[] = { "name", "seed", "horizon_s", "slo",
		"protocol", "tenants", "cloud", NULL };
	static const char *const slo_keys[] = { "ttft_s", "tpot_s", NULL };
	char cp[JX_PTR_MAX], base[256];
	const char *slash = strrchr(c->file, '/');
	json_t *doc = c->doc, *groups, *slo, *proto;
	long long seed;

	snprintf(base, sizeof(base), "%s", slash ? slash + 1 : c->file);
	base[strcspn(base, ".")] = '\0';
	if (jx_object(x, doc, "", keys) < 0 ||
	    jx_str(x, doc, "", "name", base, &c->name) < 0 ||
	    jx_int(x, doc, "", "seed", 0, LLONG_MAX, 1, &seed) < 0 ||
	    jx_num(x, doc, "", "horizon_s", JX_NONNEG, 0, &c->horizon_s) < 0)
		return -1;
	c->seed = (uint64_t)seed;
	slo = object_or_new(doc, "slo");
	if (jx_object(x, slo, "/slo", slo_keys) < 0 ||
	    jx_num(x, slo, "/slo", "ttft_s", JX_POS, 2.0, &c->slo.ttft_s) < 0 ||
	    jx_num(x, slo, "/slo", "tpot_s", JX_POS, 0.1, &c->slo.tpot_s) < 0)
		return -1;
	proto = json_object_get(doc, "protocol");
	if (!proto) {
		proto = json_pack("{s:s}", "kind", "async");
		json_object_set_new(doc, "protocol", proto);
	}
	{
		struct cfg_protocol unused;

		if (read_protocol(x, proto, "/protocol", &unused) < 0)
			return -1;
	}
	if (read_cloud(x, object_or_new(doc, "cloud"), "/cloud", &c->cloud) < 0)
		return -1;
	groups = json_object_get(doc, "tenants");
	if (!json_is_array(groups) || json_array_size(groups) == 0)
		return jx_fail(x, "/tenants", "a non-empty array of tenant groups",
			       groups);
	c->n_groups = json_array_size(groups);
	c->groups = xcalloc(c->n_groups, sizeof(*c->groups));
	for (size_t i = 0; i < c->n_groups; i++) {
		if (read_group(x, json_array_get(groups, i),
			       jx_index(cp, "/tenants", i), proto, i,
			       &c->groups[i]) < 0)
			return -1;
		if (c->groups[i].proto.caps.speculates &&
		    c->groups[i].device.vocab &&
		    c->groups[i].device.vocab != c->cloud.model->vocab)
			return err_set(x->err, "%s: %s/device/profile: the "
				       "profile's draft model has a vocabulary "
				       "of %d, /cloud/model %s has %d; a draft "
				       "must share its target's vocabulary",
				       x->file, cp, c->groups[i].device.vocab,
				       c->cloud.model->name,
				       c->cloud.model->vocab);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(c->groups[j].name, c->groups[i].name))
				return err_set(x->err, "%s: %s/name: group name "
					       "\"%s\" is used twice", x->file,
					       cp, c->groups[i].name);
	}
	return 0;
}

int cfg_load(struct cfg *c, const char *path, const char *const *sets,
	     size_t n_sets, struct err *e)
{
	json_t *doc = jx_load(path, e);

	if (!doc) {
		*c = (struct cfg){ 0 };
		return -1;
	}
	return cfg_parse(c, doc, path, sets, n_sets, e);
}

int cfg_parse(struct cfg *c, json_t *doc, const char *file,
	      const char *const *sets, size_t n_sets, struct err *e)
{
	struct jx x = { .file = file, .err = e };

	*c = (struct cfg){ .file = xstrdup(file), .doc = doc };
	for (size_t i = 0; i < n_sets; i++) {
		const char *eq = strchr(sets[i], '=');
		char ptr[JX_PTR_MAX];

		if (!eq || eq == sets[i] || (size_t)(eq - sets[i]) >= sizeof(ptr)) {
			err_set(e, "--set '%s': expected POINTER=VALUE, e.g. "
				"/cloud/replicas=2", sets[i]);
			goto fail;
		}
		snprintf(ptr, sizeof(ptr), "%.*s", (int)(eq - sets[i]), sets[i]);
		if (jx_set(c->doc, ptr, eq + 1, e) < 0)
			goto fail;
	}
	if (read_top(c, &x) < 0)
		goto fail;
	return 0;
fail:
	cfg_release(c);
	return -1;
}

void cfg_release(struct cfg *c)
{
	for (size_t i = 0; i < c->n_groups; i++)
		group_release(&c->groups[i]);
	free(c->groups);
	vtab_release(&c->cloud.gpu.vtab);
	free(c->file);
	json_decref(c->doc);
	*c = (struct cfg){ 0 };
}

char *cfg_resolved(const struct cfg *c)
{
	return jx_dumps(c->doc);
}

int cfg_wan_read(const char *name, json_t *v, struct cfg_wan *out,
		 struct err *e)
{
	struct jx x = { .file = name, .err = e };

	*out = (struct cfg_wan){ 0 };
	return read_wan(&x, v, "", out);
}
