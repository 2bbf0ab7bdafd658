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

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

/* A trace whose first request comes this far in counts its times from an
 * epoch, not from the run's start */
#define EPOCH_HINT_S 86400.0

/* a bandwidth or a rate of work: one a second at the least (a bit, a
 * byte, a FLOP; below, a run's times are out of any scale a planner
 * means) */
#define BPS_MIN ((struct jx_range){ 1, INFINITY, false, false })

/* the roofline's achieved fractions of peak bandwidth and FLOP/s */
#define ETA_BW_DEFAULT 0.8
#define ETA_FLOPS_DEFAULT 0.6

#define PROTO_NAME(kind, name, ...) name,
#define PROTO_CAPS(kind, name, edge, cloud, spec, win, cdraft, hand) \
	{ edge, cloud, spec, win, cdraft, hand },
const char *const cfg_proto_names[] = { PROTO_LIST(PROTO_NAME) NULL };
static const struct proto_caps proto_caps[] = { PROTO_LIST(PROTO_CAPS) };
#undef PROTO_NAME
#undef PROTO_CAPS

#define ARRIVAL_NAME(kind, name) name,
const char *const cfg_arrival_names[] = { ARRIVAL_LIST(ARRIVAL_NAME) NULL };
#undef ARRIVAL_NAME

#define HANDOVER_NAME(kind, name, ...) name,
const char *const cfg_handover_names[] = { HANDOVER_LIST(HANDOVER_NAME) NULL };
const char *const cfg_handback_names[] = { HANDBACK_LIST(HANDOVER_NAME) NULL };
#undef HANDOVER_NAME

#define SCHED_NAME(policy, name, ...) name,
#define SCHED_DEPLOYED(policy, name, deployed, ...) deployed,
/* whether a policy's hold waits window_s for a fuller batch */
#define SCHED_HOLDS_hold_never false
#define SCHED_HOLDS_hold_window true
#define SCHED_HOLDS(policy, name, deployed, per_tenant, route, hold, ...) \
	SCHED_HOLDS_##hold,
const char *const cfg_sched_names[] = { SCHED_LIST(SCHED_NAME) NULL };
static const bool sched_deployed[] = { SCHED_LIST(SCHED_DEPLOYED) };
static const bool sched_holds[] = { SCHED_LIST(SCHED_HOLDS) };
#undef SCHED_NAME
#undef SCHED_DEPLOYED
#undef SCHED_HOLDS

#define KV_NAME(policy, name, ...) name,
const char *const cfg_kv_names[] = { KV_LIST(KV_NAME) NULL };
#undef KV_NAME

bool cfg_kv_grows(enum kv_policy p)
{
#define KV_GROWS(policy, name, blocks, grow) grow,
	static const bool grows[KV_N] = { KV_LIST(KV_GROWS) };
#undef KV_GROWS

	return grows[p];
}

long long cfg_kv_blocks(const struct cfg_cloud *cl)
{
	return cl->kv_capacity_tokens / cl->block_tokens;
}

long long cfg_kv_watermark_blocks(const struct cfg_cloud *cl)
{
	return (long long)(cl->watermark * (double)cfg_kv_blocks(cl));
}

const struct proto_caps *cfg_proto_caps(enum proto_kind k)
{
	HS_ASSERT(k < PROTO_N);
	return &proto_caps[k];
}

bool cfg_proto_drafts(const struct proto_caps *c)
{
	return c->speculates || c->cloud_drafts;
}

bool cfg_draft_same(const struct cfg_draft *a, const struct cfg_draft *b)
{
	const struct vtab *x = &a->table, *y = &b->table;

	return !strcmp(a->model.name, b->model.name) &&
	       a->weight_bytes == b->weight_bytes && x->nt == y->nt &&
	       x->nc == y->nc &&
	       (!x->nt || (!memcmp(x->tok, y->tok, x->nt * sizeof(*x->tok)) &&
			   !memcmp(x->ctx, y->ctx, x->nc * sizeof(*x->ctx)) &&
			   !memcmp(x->sec, y->sec,
				   x->nt * x->nc * sizeof(*x->sec))));
}

bool cfg_sched_deployed(enum sched_policy p)
{
	HS_ASSERT(p < SCHED_N);
	return sched_deployed[p];
}

double cfg_sched_hold_s(enum sched_policy p, double window_s)
{
	HS_ASSERT(p < SCHED_N);
	return sched_holds[p] ? window_s : 0;
}

int cfg_name_find(const char *const *names, const char *name)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

/* A path in the document, checked to be readable, replaced in the document
 * by its resolved form and returned borrowed from it. */
static int read_file_key(struct jx *x, json_t *v, const char *p,
			 const char *key, const char **out);

/* obj[key]: a built-in model name or a model file (resolved against the
 * document's folder); absent, def (written as def_text). */
static int read_model(struct jx *x, json_t *v, const char *p, const char *key,
		      const struct shape *def, const char *def_text,
		      struct shape *out)
{
	char cp[JX_PTR_MAX];
	const char *name;

	jx_child(cp, p, key);
	if (def && !json_object_get(v, key)) {
		*out = *def;
		json_object_set_new(v, key, json_string(def_text));
		return 0;
	}
	if (jx_str(x, v, p, key, NULL, &name) < 0)
		return -1;
	if (!shape_find(name)) {
		char path[1024];

		jx_path(x, name, path, sizeof(path));
		json_object_set_new(v, key, json_string(path));
		name = json_string_value(json_object_get(v, key));
	}
	if (shape_load(out, name, x->err) < 0)
		return err_prefix(x->err, "%s: %s", x->file, cp);
	return 0;
}

/* The operator table ops (cloud_only's target: FP16 weights, the replica's
 * tp) read from doc, named name. */
static int read_ops(struct jx *x, json_t *doc, const char *name,
		    const char *cp, const struct cfg_cloud *cloud,
		    struct optab *ops)
{
	if (optab_parse(ops, doc, name, cloud->model.name, x->err) < 0)
		return err_prefix(x->err, "%s: %s", x->file, cp);
	if (ops->tp != cloud->tp || cloud->weight_bytes != 2) {
		err_set(x->err, "%s: %s: the operator table is of FP16 weights "
			"(2 bytes) on tp %d, but /cloud/weight_bytes is %g and "
			"/cloud/tp %d (name the table for this tp, or remove it "
			"to derive one)", x->file, cp, ops->tp,
			cloud->weight_bytes, cloud->tp);
		*ops = (struct optab){ 0 };
		return -1;
	}
	return 0;
}

/* A cost table of model (a file, or given inline) at obj[key], which must
 * have been measured on the configured GPU: an operator table (kind "ops",
 * into ops when it is not NULL) or a verify table of one GPU a replica. */
static int read_table(struct jx *x, json_t *v, const char *p, const char *key,
		      const struct cfg_cloud *cloud, const char *model,
		      struct vtab *out, struct optab *ops)
{
	json_t *t = json_object_get(v, key), *doc;
	const char *path = NULL, *name = "the inline table", *gpu, *kind;
	char cp[JX_PTR_MAX];
	int rc = -1;

	*out = (struct vtab){ 0 };
	if (!t)
		return 0;
	jx_child(cp, p, key);
	if (!json_is_object(t) && read_file_key(x, v, p, key, &path) < 0)
		return -1;
	if (!(doc = path ? jx_load(path, x->err) : json_incref(t)))
		return err_prefix(x->err, "%s: %s", x->file, cp);
	name = path ? path : name;
	kind = json_string_value(json_object_get(doc, "kind"));
	if (ops && kind && !strcmp(kind, "ops")) {
		rc = read_ops(x, doc, name, cp, cloud, ops);
		gpu = ops->gpu;
	} else {
		if (vtab_parse(out, doc, name, model, x->err) < 0) {
			err_prefix(x->err, "%s: %s", x->file, cp);
			goto out;
		}
		rc = 0;
		gpu = out->gpu;
		if (cloud->tp > 1) {
			err_set(x->err, "%s: %s: a verify table is of one GPU; "
				"with /cloud/tp %d name an operator table (calib "
				"import-profiles) or remove the table", x->file,
				cp, cloud->tp);
			rc = -1;
		}
	}
	if (!rc && strcmp(gpu, cloud->gpu.spec.name)) {
		err_set(x->err, "%s: %s: the table was measured on \"%s\", but "
			"the GPU is %s (/cloud/gpu); name the GPU it was measured "
			"on (/cloud/gpu/preset, or /cloud/gpu/name with its "
			"figures)", x->file, cp, gpu, cloud->gpu.spec.name);
		rc = -1;
	}
out:
	if (rc < 0) {
		vtab_release(out);
		if (ops)
			*ops = (struct optab){ 0 };
	}
	json_decref(doc);
	return rc;
}

/* Without a table: the operator table of the cloud's GPU, model and tp in
 * the folder obj["tables"] (resolved against the document's), if it has
 * one; FP16 weights only (other widths derive their cost). */
static int read_tables(struct jx *x, json_t *v, const char *p,
		       struct cfg_cloud *cloud)
{
	const char *dir;
	char cp[JX_PTR_MAX], path[1024], file[1200];
	json_t *doc;
	int rc;

	if (!json_object_get(v, "tables") || json_object_get(v, "table"))
		return 0;
	if (jx_str(x, v, p, "tables", NULL, &dir) < 0)
		return -1;
	jx_child(cp, p, "tables");
	jx_path(x, dir, path, sizeof(path));
	if (access(path, R_OK | X_OK) != 0)
		return err_set(x->err, "%s: %s: cannot read the folder '%s'",
			       x->file, cp, path);
	json_object_set_new(v, "tables", json_string(path));
	snprintf(file, sizeof(file), "%s/%s-%s-tp%d.json", path,
		 cloud->gpu.spec.name, cloud->model.name, cloud->tp);
	if (cloud->weight_bytes != 2 || access(file, R_OK) != 0)
		return 0;
	if (!(doc = jx_load(file, x->err)))
		return err_prefix(x->err, "%s: %s", x->file, cp);
	rc = read_ops(x, doc, file, cp, cloud, &cloud->gpu.ops);
	json_decref(doc);
	return rc;
}

/* The draft model of a protocol that drafts: by default the target's shape
 * in W4A16 (0.53 bytes a weight: 4-bit weights and an FP16 scale per group
 * of 128). */
static int read_draft(struct jx *x, json_t *v, const char *p,
		      const struct cfg_cloud *cloud, const char *target_text,
		      struct cfg_draft *out)
{
	static const char *const keys[] = { "model", "weight_bytes", "table",
					    NULL };

	return jx_object(x, v, p, keys) < 0 ||
	       read_model(x, v, p, "model", &cloud->model, target_text,
			  &out->model) < 0 ||
	       jx_num(x, v, p, "weight_bytes", CFG_WEIGHT_BYTES, 0.53,
		      &out->weight_bytes) < 0 ||
	       read_table(x, v, p, "table", cloud, out->model.name,
			  &out->table, NULL) < 0 ? -1 : 0;
}

static json_t *object_or_new(json_t *obj, const char *key);

static int read_protocol(struct jx *x, json_t *v, const char *p,
			 struct cfg_protocol *out)
{
	static const char *const keys[] = { "kind", "gamma", "window", "draft",
		"gamma_min", "gamma_max", "adapt_weight", "handover", "handback",
		NULL };
	char cp[JX_PTR_MAX];
	long long gamma, window, lo, hi;
	int kind, handover, handback;

	if (jx_object(x, v, p, keys) < 0 ||
	    jx_enum(x, v, p, "kind", cfg_proto_names, NULL, &kind) < 0)
		return -1;
	out->adapt = (struct cfg_adapt){ 0 };
	if (json_is_string(json_object_get(v, "gamma")) &&
	    !strcmp(json_string_value(json_object_get(v, "gamma")), "adaptive")) {
		const struct proto_caps *c = cfg_proto_caps((enum proto_kind)kind);

		if (!c->speculates)
			return jx_fail(x, jx_child(cp, p, "gamma"), "an integer "
				       "in [1, 64]: only sync and async adapt "
				       "gamma", json_object_get(v, "gamma"));
		if (jx_int(x, v, p, "gamma_min", 1, 64, 1, &lo) < 0 ||
		    jx_int(x, v, p, "gamma_max", lo, 64, 16, &hi) < 0 ||
		    jx_num(x, v, p, "adapt_weight",
			   (struct jx_range){ 0, 1, true, false }, 0.05,
			   &out->adapt.weight) < 0)
			return -1;
		out->adapt.on = true;
		out->adapt.gamma_min = (int)lo;
		out->adapt.gamma_max = (int)hi;
		gamma = lo > CFG_GAMMA_DEFAULT ? lo
			: hi < CFG_GAMMA_DEFAULT ? hi : CFG_GAMMA_DEFAULT;
	} else {
		static const char *const adapt_keys[] = { "gamma_min",
			"gamma_max", "adapt_weight", NULL };

		for (int i = 0; adapt_keys[i]; i++)
			if (json_object_get(v, adapt_keys[i]))
				return jx_fail(x, jx_child(cp, p, adapt_keys[i]),
					       "nothing: it bounds an adaptive "
					       "gamma (\"gamma\": \"adaptive\")",
					       json_object_get(v, adapt_keys[i]));
		if (jx_int(x, v, p, "gamma", 1, 64, CFG_GAMMA_DEFAULT,
			   &gamma) < 0)
			return -1;
	}
	/* adaptive: the most blocks in flight the window may grow to */
	if (jx_int(x, v, p, "window", 1, 1024,
		   !cfg_proto_caps((enum proto_kind)kind)->windowed ? 1 :
		   out->adapt.on ? 32 : 4, &window) < 0)
		return -1;
	if (jx_enum(x, v, p, "handover", cfg_handover_names, "never",
		    &handover) < 0 ||
	    jx_enum(x, v, p, "handback", cfg_handback_names, "never",
		    &handback) < 0)
		return -1;
	if (handover != HANDOVER_NEVER &&
	    !cfg_proto_caps((enum proto_kind)kind)->hands_over)
		return jx_fail(x, jx_child(cp, p, "handover"), "\"never\": only "
			       "sync and async hand a request over from the "
			       "cloud", json_object_get(v, "handover"));
	if (handback != HANDBACK_NEVER &&
	    !cfg_proto_caps((enum proto_kind)kind)->hands_over)
		return jx_fail(x, jx_child(cp, p, "handback"), "\"never\": only "
			       "sync and async hand a request back to the "
			       "cloud", json_object_get(v, "handback"));
	out->handover = (enum handover_policy)handover;
	out->handback = (enum handback_policy)handback;
	out->kind = (enum proto_kind)kind;
	out->caps = *cfg_proto_caps(out->kind);
	out->gamma = (int)gamma;
	out->window = out->caps.windowed ? (int)window : 1;
	if (!cfg_proto_drafts(&out->caps) && json_object_get(v, "draft"))
		return jx_fail(x, jx_child(cp, p, "draft"), "no draft: a "
			       "cloud_only or edge_only protocol drafts nothing",
			       json_object_get(v, "draft"));
	return 0;
}

/* The protocol's draft (v is the protocol), where it drafts: by default
 * the model the device's profile was measured with, when hybridspec knows
 * it, else the target's shape. */
static int read_protocol_draft(struct jx *x, json_t *v, const char *p,
			       const struct cfg_cloud *cloud,
			       const char *target_text, const char *device_model,
			       struct cfg_protocol *out)
{
	char cp[JX_PTR_MAX];
	json_t *d;

	if (!cfg_proto_drafts(&out->caps))
		return 0;
	jx_child(cp, p, "draft");
	d = object_or_new(v, "draft");
	if (device_model && device_model[0] && shape_find(device_model) &&
	    !json_object_get(d, "model"))
		json_object_set_new(d, "model", json_string(device_model));
	return read_draft(x, d, cp, cloud, target_text, &out->draft);
}

/* The device's costs: the profile's (pe) where v does not give them */
static int read_costs(struct jx *x, json_t *v, const char *p,
		      const struct prof_edge *pe, struct cfg_device *out)
{
	return jx_num(x, v, p, "draft_base_s", CFG_TIME, pe->draft_base_s,
		      &out->draft_base_s) < 0 ||
	       jx_num(x, v, p, "draft_per_ctx_s", CFG_TIME0, pe->draft_per_ctx_s,
		      &out->draft_per_ctx_s) < 0 ||
	       jx_num(x, v, p, "prefill_base_s", CFG_TIME0, pe->prefill_base_s,
		      &out->prefill_base_s) < 0 ||
	       jx_num(x, v, p, "prefill_per_token_s", CFG_TIME0,
		      pe->prefill_per_token_s, &out->prefill_per_token_s) < 0 ||
	       jx_num(x, v, p, "draft_pair_s", CFG_TIME0, pe->draft_pair_s,
		      &out->draft_pair_s) < 0 ||
	       jx_num(x, v, p, "power_busy_w", CFG_WATTS, pe->power_busy_w,
		      &out->power_busy_w) < 0 ||
	       jx_num(x, v, p, "power_idle_w", CFG_WATTS, pe->power_idle_w,
		      &out->power_idle_w) < 0 ||
	       jx_num(x, v, p, "battery_wh", JX_NONNEG, pe->battery_wh,
		      &out->battery_wh) < 0
		       ? -1 : 0;
}

/* The costs a held-out band scales: a time is (1 + error) times the
 * predicted one (docs/calib.md) */
static void scale_draft(struct cfg_device *d, double f)
{
	d->draft_base_s *= f;
	d->draft_per_ctx_s *= f;
	d->draft_pair_s *= f;
}

static void scale_prefill(struct cfg_device *d, double f)
{
	d->prefill_base_s *= f;
	d->prefill_per_token_s *= f;
}

/* device/KEY ("none", "low", "high"): the costs at an end of the
 * profile's held-out band of that kind */
static const struct {
	const char *key;
	enum prof_band_kind kind;
	void (*scale)(struct cfg_device *, double);
} band_keys[] = {
	{ "draft_band", PROF_BAND_DECODE, scale_draft },
	{ "prefill_band", PROF_BAND_PREFILL, scale_prefill },
};

#define NBAND_KEYS (sizeof(band_keys) / sizeof(band_keys[0]))

/* A time as a distribution (dist_read, > 0 or with zero >= 0) whose mean
 * is at most CFG_TIME_MAX_S (its draws may reach past it). */
static int time_dist(struct jx *x, json_t *obj, const char *ptr,
		     const char *key, bool positive, const char *def,
		     struct dist *out)
{
	char p[JX_PTR_MAX], want[64];

	if (dist_read(x, obj, ptr, key, positive ? JX_POS : JX_NONNEG, def,
		      out) < 0)
		return -1;
	if (dist_mean(out) <= CFG_TIME_MAX_S)
		return 0;
	dist_release(out);
	jx_child(p, ptr, key);
	snprintf(want, sizeof(want), "a time of mean at most %g s",
		 CFG_TIME_MAX_S);
	return jx_fail(x, p, want, json_object_get(obj, key));
}

/* The device's four costs and its power; a profile (`calib cpu`, `calib
 * derive`) gives their defaults, its held-out bands their ends. */
static int read_device(struct jx *x, json_t *v, const char *p,
		       struct cfg_device *out)
{
	static const char *const keys[] = { "profile", "draft_base_s",
		"draft_per_ctx_s", "prefill_base_s", "prefill_per_token_s",
		"power_busy_w", "power_idle_w", "battery_wh", "passes",
		"draft_pair_s", "wake", "draft_band", "prefill_band", NULL };
	static const char *const passes[] = { "whole", "ideal", NULL };
	static const char *const ends[] = { "none", "low", "high", NULL };
	struct prof_edge pe = { .draft_base_s = JX_REQUIRED,
				.prefill_per_token_s = JX_REQUIRED };
	json_t *profile;
	int ideal, end[NBAND_KEYS];

	out->profile = NULL;
	out->model[0] = '\0';
	if (jx_object(x, v, p, keys) < 0 ||
	    jx_enum(x, v, p, "passes", passes, "whole", &ideal) < 0 ||
	    wake_read(x, v, p, &out->wake) < 0)
		return -1;
	for (size_t k = 0; k < NBAND_KEYS; k++)
		if (jx_enum(x, v, p, band_keys[k].key, ends, "none", &end[k]) < 0)
			return -1;
	out->ideal_passes = ideal;
	/* a profile file, or one given inline (as calib check gives its own) */
	if ((profile = json_object_get(v, "profile"))) {
		if (!json_is_object(profile) &&
		    read_file_key(x, v, p, "profile", &out->profile) < 0)
			return -1;
		if ((out->profile ? prof_edge_load(out->profile, &pe, x->err)
				  : prof_edge_parse(profile, "the inline profile",
						    &pe, x->err)) < 0)
			return err_prefix(x->err, "%s: %s/profile", x->file, p);
		snprintf(out->model, sizeof(out->model), "%s", pe.model);
	}
	if (read_costs(x, v, p, &pe, out) < 0)
		return -1;
	for (size_t k = 0; k < NBAND_KEYS; k++) {
		const struct prof_band *b = &pe.band[band_keys[k].kind];
		char cp[JX_PTR_MAX];

		if (!end[k])
			continue;
		if (!b->has)
			return err_set(x->err, "%s: %s: expected a profile with a "
				       "held-out %s band (derivation.held_out.%s, "
				       "as calib derive writes), found %s%s",
				       x->file, jx_child(cp, p, band_keys[k].key),
				       prof_band_names[band_keys[k].kind],
				       prof_band_names[band_keys[k].kind],
				       profile ? "none in " : "no profile",
				       !profile ? "" : out->profile ? out->profile
								    : "the inline one");
		band_keys[k].scale(out, 1 + (end[k] == 1 ? b->lowest : b->highest));
	}
	return 0;
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
		"rate_scale", "prompt_tokens", "output_tokens", "think_s",
		"start_s", "trace", "trace_format", "trace_speed",
		"trace_tokenizer", "trace_rate_per_s", NULL };
	int arrival, format;
	char cp[JX_PTR_MAX];

	if (jx_object(x, v, p, keys) < 0 ||
	    jx_enum(x, v, p, "arrival", cfg_arrival_names,
		    cfg_arrival_names[ARRIVAL_CLOSED], &arrival) < 0)
		return -1;
	out->arrival = (enum arrival_kind)arrival;
	if (out->arrival == ARRIVAL_TRACE) {
		if (read_file_key(x, v, p, "trace", &out->trace) < 0 ||
		    jx_enum(x, v, p, "trace_format", wl_format_names(), "auto",
			    &format) < 0 ||
		    jx_num(x, v, p, "trace_speed", JX_POS, 1,
			   &out->trace_speed) < 0 ||
		    jx_str(x, v, p, "trace_tokenizer", "", &out->trace_tokenizer) < 0 ||
		    jx_num(x, v, p, "trace_rate_per_s", JX_NONNEG, 0,
			   &out->trace_rate_per_s) < 0)
			return -1;
		if (!out->trace_tokenizer[0])
			out->trace_tokenizer = NULL;
		out->trace_format = wl_format_names()[format];
		return 0;
	}
	for (int i = 0; i < 4; i++) {
		static const char *const tk[] = { "trace_format", "trace_speed",
			"trace_tokenizer", "trace_rate_per_s" };
		const char *k = tk[i];

		if (json_object_get(v, k))
			return jx_fail(x, jx_child(cp, p, k), "nothing: it reads "
				       "an arrival trace (\"arrival\": "
				       "\"trace\")", json_object_get(v, k));
	}
	if (out->arrival == ARRIVAL_POISSON) {
		if (rate_read(x, v, p, &out->rate) < 0)
			return -1;
		out->rate_per_s = rate_mean(&out->rate);
	}
	if (jx_int(x, v, p, "requests", 1, LLONG_MAX, 1, &out->requests) < 0 ||
	    dist_read(x, v, p, "prompt_tokens", JX_POS, NULL,
		      &out->prompt_tokens) < 0 ||
	    dist_read(x, v, p, "output_tokens", JX_POS, NULL,
		      &out->output_tokens) < 0 ||
	    time_dist(x, v, p, "think_s", false, "0", &out->think_s) < 0 ||
	    time_dist(x, v, p, "start_s", false, "0", &out->start_s) < 0)
		return -1;
	/* a length's mean sizes the KV cache and the formulas */
	for (int k = 0; k < 2; k++) {
		const char *key = k ? "output_tokens" : "prompt_tokens";
		char at[JX_PTR_MAX];

		if (!isfinite(dist_mean(k ? &out->output_tokens
					  : &out->prompt_tokens)))
			return err_set(x->err, "%s: %s: expected lengths of a finite "
				       "mean (a Pareto's alpha above 1), got an "
				       "infinite one", x->file,
				       jx_child(at, p, key));
	}
	return 0;
}

/* An acceptance profile (`calib accept`) makes the trace model and its bits
 * file, or the iid model and its alpha, the defaults; a published figure
 * (prof_published_load) makes the iid model and its alpha the default. */
static int read_accept(struct jx *x, json_t *v, const char *p,
		       struct cfg_accept *out)
{
	static const char *const models[] = { "iid", "trace", "markov", NULL };
	static const char *const replays[] = { "stream", "request", NULL };
	static const char *const keys[][7] = {
		[ACCEPT_IID] = { "model", "alpha", "profile", "published",
				 "proxy" },
		[ACCEPT_TRACE] = { "model", "file", "profile", "proxy",
				   "replay" },
		[ACCEPT_MARKOV] = { "model", "p_after_accept", "p_after_reject" },
	};
	struct prof_accept pa = { .alpha = JX_REQUIRED };
	struct prof_published pp = { 0 };
	const char *profile = NULL, *published = NULL, *file;
	int model, replay;
	bool given;

	if (!json_is_object(v))
		return jx_fail(x, p, "an object", v);
	if (json_object_get(v, "profile") && json_object_get(v, "published"))
		return jx_fail(x, p, "a profile or a published figure, not both",
			       v);
	if (json_object_get(v, "profile")) {
		if (read_file_key(x, v, p, "profile", &profile) < 0)
			return -1;
		if (prof_accept_load(profile, &pa, x->err) < 0)
			return err_prefix(x->err, "%s: %s/profile", x->file, p);
		out->from = "profile";
	}
	if (json_object_get(v, "published")) {
		if (jx_str(x, v, p, "published", NULL, &published) < 0)
			return -1;
		if (prof_published_load(published, &pp, x->err) < 0)
			return err_prefix(x->err, "%s: %s/published", x->file, p);
		pa.alpha = pp.alpha;
		memcpy(pa.target, pp.target, sizeof(pa.target));
		memcpy(pa.draft, pp.draft, sizeof(pa.draft));
		out->from = "published";
	}
	if (jx_enum(x, v, p, "model", models, profile ? "trace" : "iid",
		    &model) < 0 ||
	    jx_object(x, v, p, keys[model]) < 0 ||
	    ((profile || published) &&
	     jx_bool(x, v, p, "proxy", 0, &out->proxy) < 0))
		return -1;
	out->model = (enum accept_model)model;
	memcpy(out->target, pa.target, sizeof(out->target));
	memcpy(out->draft, pa.draft, sizeof(out->draft));
	switch (out->model) {
	case ACCEPT_IID:
		given = json_object_get(v, "alpha") != NULL;
		if (jx_num(x, v, p, "alpha", JX_UNIT, pa.alpha, &out->alpha) < 0)
			return -1;
		if (published && !given)
			snprintf(out->source, sizeof(out->source), "iid at the alpha "
				 "of %.230s", pp.source);
		else if (profile && !given)
			snprintf(out->source, sizeof(out->source), "iid at the alpha "
				 "of %.200s", pa.source);
		else
			snprintf(out->source, sizeof(out->source), "iid, alpha %g",
				 out->alpha);
		return 0;
	case ACCEPT_TRACE:
		if (jx_enum(x, v, p, "replay", replays, "stream", &replay) < 0)
			return -1;
		out->by_request = replay == 1;
		file = json_string_value(json_object_get(v, "file"));
		if (profile && (!json_object_get(v, "file") ||
				(file && !strcmp(file, pa.bits)))) {
			/* resolved against the profile's folder, and read (a
			 * resolved config states it) */
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

/* The edge's radio: a preset by name (default wifi) or its figures. */
static int read_radio(struct jx *x, json_t *v, const char *p,
		      struct radio *out)
{
	static const char *const keys[] = { "name", "up_j_per_bit",
		"down_j_per_bit", "active_w", "tail_w", "tail_s", "promo_j",
		NULL };
	json_t *r = json_object_get(v, "radio");
	const char *name;
	char cp[JX_PTR_MAX];
	int k;

	if (!r || json_is_string(r)) {
		if (jx_enum(x, v, p, "radio", radio_names(), "wifi", &k) < 0)
			return -1;
		*out = *radio_find(radio_names()[k]);
		return 0;
	}
	jx_child(cp, p, "radio");
	if (jx_object(x, r, cp, keys) < 0 ||
	    jx_str(x, r, cp, "name", "custom", &name) < 0 ||
	    jx_num(x, r, cp, "up_j_per_bit", CFG_J_PER_BIT, JX_REQUIRED,
		   &out->up_j_per_bit) < 0 ||
	    jx_num(x, r, cp, "down_j_per_bit", CFG_J_PER_BIT, JX_REQUIRED,
		   &out->down_j_per_bit) < 0 ||
	    jx_num(x, r, cp, "active_w", CFG_WATTS, JX_REQUIRED,
		   &out->active_w) < 0 ||
	    jx_num(x, r, cp, "tail_w", CFG_WATTS, 0, &out->tail_w) < 0 ||
	    jx_num(x, r, cp, "tail_s", CFG_TIME0, 0, &out->tail_s) < 0 ||
	    jx_num(x, r, cp, "promo_j", CFG_JOULES, 0, &out->promo_j) < 0)
		return -1;
	snprintf(out->name, sizeof(out->name), "%s", name);
	out->source = NULL;
	return 0;
}

/* An RTT that steps: {"at_s": T, "rtt_s": DIST}, or none. */
static int read_rtt_step(struct jx *x, json_t *v, const char *p,
			 struct cfg_wan *out)
{
	static const char *const keys[] = { "at_s", "rtt_s", NULL };
	json_t *st = json_object_get(v, "rtt_step");
	char cp[JX_PTR_MAX];

	out->rtt_step_at_s = 0;
	if (!st)
		return 0;
	jx_child(cp, p, "rtt_step");
	return jx_object(x, st, cp, keys) < 0 ||
	       jx_num(x, st, cp, "at_s", CFG_TIME, JX_REQUIRED,
		      &out->rtt_step_at_s) < 0 ||
	       time_dist(x, st, cp, "rtt_s", true, NULL, &out->rtt_after_s) < 0
		       ? -1 : 0;
}

/* A blackout: {"at_s": T, "for_s": D}, or none. */
static int read_blackout(struct jx *x, json_t *v, const char *p,
			 struct cfg_wan *out)
{
	static const char *const keys[] = { "at_s", "for_s", NULL };
	json_t *b = json_object_get(v, "blackout");
	char cp[JX_PTR_MAX];

	out->blackout_at_s = out->blackout_for_s = 0;
	if (!b)
		return 0;
	jx_child(cp, p, "blackout");
	return jx_object(x, b, cp, keys) < 0 ||
	       jx_num(x, b, cp, "at_s", CFG_TIME0, JX_REQUIRED,
		      &out->blackout_at_s) < 0 ||
	       jx_num(x, b, cp, "for_s", CFG_TIME, JX_REQUIRED,
		      &out->blackout_for_s) < 0 ? -1 : 0;
}

static int read_wan(struct jx *x, json_t *v, const char *p, struct cfg_wan *out)
{
	static const char *const keys[] = { "rtt_s", "up_bps", "down_bps",
		"loss", "rto_s", "header_bytes", "stack_s", "radio", "rtt_step",
		"blackout", NULL };

	return jx_object(x, v, p, keys) < 0 ||
	       read_radio(x, v, p, &out->radio) < 0 ||
	       read_rtt_step(x, v, p, out) < 0 ||
	       read_blackout(x, v, p, out) < 0 ||
	       time_dist(x, v, p, "rtt_s", true, NULL, &out->rtt_s) < 0 ||
	       jx_num(x, v, p, "up_bps", BPS_MIN, 20e6, &out->up_bps) < 0 ||
	       jx_num(x, v, p, "down_bps", BPS_MIN, 50e6, &out->down_bps) < 0 ||
	       jx_num(x, v, p, "loss", (struct jx_range){ 0, 1, false, true }, 0,
		      &out->loss) < 0 ||
	       jx_num(x, v, p, "rto_s", CFG_TIME, 0.2, &out->rto_s) < 0 ||
	       jx_int(x, v, p, "header_bytes", 0, 65535, 66,
		      &out->header_bytes) < 0 ||
	       jx_num(x, v, p, "stack_s", CFG_TIME0, 0, &out->stack_s) < 0 ?
	       -1 : 0;
}

static void group_release(struct cfg_group *g)
{
	dist_release(&g->workload.prompt_tokens);
	dist_release(&g->workload.output_tokens);
	dist_release(&g->workload.think_s);
	dist_release(&g->workload.start_s);
	rate_release(&g->workload.rate);
	cfg_wan_release(&g->wan);
	acc_trace_release(&g->acc_trace);
	wl_trace_release(&g->wl_trace);
	vtab_release(&g->proto.draft.table);
	wake_release(&g->device.wake);
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

static int read_slo(struct jx *x, json_t *v, const char *p,
		    const struct cfg_slo *def, struct cfg_slo *out)
{
	static const char *const keys[] = { "ttft_s", "tpot_s", NULL };

	return jx_object(x, v, p, keys) < 0 ||
	       jx_num(x, v, p, "ttft_s", CFG_TIME, def->ttft_s, &out->ttft_s) < 0 ||
	       jx_num(x, v, p, "tpot_s", CFG_TIME, def->tpot_s, &out->tpot_s) < 0
		       ? -1 : 0;
}

int cfg_check_name(struct jx *x, json_t *obj, const char *ptr,
		   const char *name, bool folder, bool given)
{
	char cp[JX_PTR_MAX];
	bool bad = false;

	for (const char *q = name; *q; q++)
		bad |= *q == ',' || *q == '"' || (unsigned char)*q < 0x20 ||
		       (folder && *q == '/');
	if (folder)
		bad |= !*name || !strcmp(name, ".") || !strcmp(name, "..") ||
		       strlen(name) > CFG_NAME_MAX;
	if (!bad)
		return 0;
	if (!given)
		return err_set(x->err, "%s: %s: the default name \"%s\" (the "
			       "file's) cannot name results: give one", x->file,
			       jx_child(cp, ptr, "name"), name);
	return jx_fail(x, jx_child(cp, ptr, "name"), folder ?
		       "a name for a results folder: not empty, \".\" or "
		       "\"..\", at most 255 bytes, without '/', ',', '\"' or "
		       "control characters" :
		       "a name without ',', '\"' or control characters",
		       json_object_get(obj, "name"));
}

/* What the group's drafts are checked against: the draft shares the
 * target's tokenizer (shape_same_tokens: padded vocabularies of one
 * tokenizer pass); a device profile was measured with the draft; an
 * acceptance profile was measured with this target and draft, or is
 * declared a proxy for them. */
static int check_models(struct jx *x, const char *p, struct cfg_group *g,
			const struct cfg_cloud *cl)
{
	const struct shape *d = &g->proto.draft.model, *t = &cl->model;
	struct cfg_accept *a = &g->accept;

	if (!cfg_proto_drafts(&g->proto.caps))
		return 0;
	if (!shape_same_tokens(d, t)) {
		char from[JX_PTR_MAX + 32] = "";

		if (!strcmp(g->device.model, d->name))
			snprintf(from, sizeof(from), " (the model of %s/device/"
				 "profile)", p);
		return err_set(x->err, "%s: %s/protocol/draft/model: %s%s has "
			       "the tokenizer %s (vocabulary %d), the target %s "
			       "(/cloud/model) %s (vocabulary %d); a draft must "
			       "share its target's tokenizer", x->file, p, d->name,
			       from, d->tokenizer ? d->tokenizer : "(not known)",
			       d->vocab, t->name,
			       t->tokenizer ? t->tokenizer : "(not known)",
			       t->vocab);
	}
	if (g->proto.caps.speculates && g->device.model[0] &&
	    strcmp(g->device.model, d->name))
		return err_set(x->err, "%s: %s/device/profile: measured drafting "
			       "with %s, but the group's draft is %s (%s/protocol/"
			       "draft/model)", x->file, p, g->device.model,
			       d->name, p);
	if (!a->target[0])
		return 0;
	if (a->proxy) {
		size_t at = strlen(a->source);

		snprintf(a->source + at, sizeof(a->source) - at, ", a proxy for "
			 "%s against %s", d->name, t->name);
		return 0;
	}
	if (strcmp(a->target, t->name) || (a->draft[0] &&
					    strcmp(a->draft, d->name))) {
		const struct shape *pt = shape_find(a->target);
		char vocab[64] = "";

		if (pt)
			snprintf(vocab, sizeof(vocab), " (vocabulary %d)",
				 pt->vocab);
		return err_set(x->err, "%s: %s/acceptance/%s: measured with "
			       "%s against %s%s, but the group drafts with %s "
			       "against %s (vocabulary %d); set %s/acceptance/"
			       "proxy to true to use it as a stand-in", x->file,
			       p, a->from, a->draft[0] ? a->draft : "a draft",
			       a->target, vocab, d->name, t->name, t->vocab, p);
	}
	return 0;
}

static int read_group(struct jx *x, json_t *v, const char *p,
		      const json_t *def_proto, const struct cfg *c,
		      const char *target_text, size_t index,
		      struct cfg_group *g)
{
	static const char *const keys[] = { "name", "count", "slo", "protocol",
		"device", "workload", "acceptance", "wan", NULL };
	char cp[JX_PTR_MAX], name[32];
	json_t *proto;

	snprintf(name, sizeof(name), "group%zu", index);
	if (jx_object(x, v, p, keys) < 0 ||
	    jx_str(x, v, p, "name", name, &g->name) < 0 ||
	    cfg_check_name(x, v, p, g->name, false, true) < 0 ||
	    jx_int(x, v, p, "count", 1, 100000000, 1, &g->count) < 0)
		return -1;
	g->slo = c->slo;
	if (json_object_get(v, "slo") &&
	    read_slo(x, json_object_get(v, "slo"), jx_child(cp, p, "slo"),
		     &c->slo, &g->slo) < 0)
		return -1;
	g->own_protocol = (proto = json_object_get(v, "protocol")) != NULL;
	if (!proto)
		json_object_set_new(v, "protocol",
				    proto = json_deep_copy(def_proto));
	else if (json_is_object(proto) && !json_object_get(proto, "kind"))
		/* its own without a kind: the config's */
		json_object_set(proto, "kind", json_object_get(def_proto, "kind"));
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
	if (read_protocol_draft(x, proto, jx_child(cp, p, "protocol"), &c->cloud,
				target_text, g->device.model, &g->proto) < 0)
		return -1;
	if (read_workload(x, object_or_new(v, "workload"),
			  jx_child(cp, p, "workload"), &g->workload) < 0 ||
	    read_wan(x, object_or_new(v, "wan"), jx_child(cp, p, "wan"),
		     &g->wan) < 0)
		return -1;
	if (g->workload.arrival == ARRIVAL_TRACE &&
	    wl_trace_load(&g->wl_trace, g->workload.trace,
			  g->workload.trace_format, g->workload.trace_speed,
			  &(struct wl_text){ g->workload.trace_tokenizer,
					     g->workload.trace_rate_per_s,
					     c->seed }, x->err) < 0)
		return err_prefix(x->err, "%s: %s/workload/trace", x->file, p);
	if (g->workload.arrival == ARRIVAL_TRACE) {
		const struct wl_trace *t = &g->wl_trace;

		/* rows by time: the last comes latest */
		if (t->rows[t->n - 1].arrive_s > CFG_TIME_MAX_S)
			return err_set(x->err, "%s: %s/workload/trace: %s: "
				       "request %zu arrives at %.10g s into the "
				       "run (at trace_speed %g): expected at most "
				       "%g s, a config's time%s", x->file, p,
				       g->workload.trace, t->n,
				       t->rows[t->n - 1].arrive_s,
				       g->workload.trace_speed, CFG_TIME_MAX_S,
				       t->rows[0].arrive_s > EPOCH_HINT_S
				       ? " (the first arrives a day or more in: "
					 "times counted from an epoch? they "
					 "count from 0)" : "");
		wl_trace_assign(&g->wl_trace, (uint32_t)g->count);
	}
	/* acceptance matters only where drafts are verified */
	if (!cfg_proto_drafts(&g->proto.caps) &&
	    !json_object_get(v, "acceptance"))
		return 0;
	if (read_accept(x, object_or_new(v, "acceptance"),
			jx_child(cp, p, "acceptance"), &g->accept) < 0)
		return -1;
	if (g->accept.model == ACCEPT_TRACE &&
	    acc_trace_load(&g->acc_trace, g->accept.trace, x->err) < 0)
		return err_prefix(x->err, "%s: %s/acceptance/file", x->file, p);
	return check_models(x, p, g, &c->cloud);
}

/* The GPU: a preset's figures, any of them given in their place; or, with
 * no preset and figures given, all of its own. */
static int read_gpu(struct jx *x, json_t *v, const char *p, struct cfg_gpu *out)
{
	static const char *const keys[] = { "preset", "name", "mem_bw_Bps",
		"fp16_flops", "fp8_flops", "mem_bytes", "power_idle_w", "power_max_w",
		"usd_per_hour", "eta_bw", "eta_flops", "overhead_s", "pricing",
		"table", "tables", "wake", NULL };
	static const char *const pricings[] = { "derived", "roofline", NULL };
	static const char *const figures[] = { "name", "mem_bw_Bps",
		"fp16_flops", "mem_bytes", NULL };
	const struct gpu_spec *base = NULL;
	const char *name;
	bool custom = false;
	int preset, pricing;

	if (jx_object(x, v, p, keys) < 0 || wake_read(x, v, p, &out->wake) < 0 ||
	    jx_enum(x, v, p, "pricing", pricings, "derived", &pricing) < 0)
		return -1;
	out->pricing = (enum gpu_pricing)pricing;
	for (int i = 0; figures[i] && !json_object_get(v, "preset"); i++)
		custom |= json_object_get(v, figures[i]) != NULL;
	out->preset = NULL;
	out->spec = (struct gpu_spec){ 0 };
	if (!custom) {
		if (jx_enum(x, v, p, "preset", gpu_preset_names(),
			    GPU_PRESET_DEFAULT, &preset) < 0)
			return -1;
		out->preset = gpu_preset_names()[preset];
		out->spec = *(base = gpu_preset_find(out->preset));
	}
	if (jx_str(x, v, p, "name", base ? base->name : "custom", &name) < 0 ||
	    jx_num(x, v, p, "mem_bw_Bps", BPS_MIN,
		   base ? base->mem_bw_Bps : JX_REQUIRED,
		   &out->spec.mem_bw_Bps) < 0 ||
	    jx_num(x, v, p, "fp16_flops", BPS_MIN,
		   base ? base->fp16_flops : JX_REQUIRED,
		   &out->spec.fp16_flops) < 0 ||
	    jx_num(x, v, p, "fp8_flops", JX_NONNEG, base ? base->fp8_flops : 0,
		   &out->spec.fp8_flops) < 0 ||
	    jx_num(x, v, p, "mem_bytes", CFG_MEM_BYTES,
		   base ? base->mem_bytes : JX_REQUIRED,
		   &out->spec.mem_bytes) < 0 ||
	    jx_num(x, v, p, "power_idle_w", CFG_WATTS,
		   base ? base->power_idle_w : 0, &out->spec.power_idle_w) < 0 ||
	    jx_num(x, v, p, "power_max_w", CFG_WATTS,
		   base ? base->power_max_w : 0, &out->spec.power_max_w) < 0 ||
	    jx_num(x, v, p, "usd_per_hour", JX_NONNEG,
		   base ? base->usd_per_hour : 0, &out->spec.usd_per_hour) < 0 ||
	    jx_num(x, v, p, "eta_bw", (struct jx_range){ 0, 1, true, false },
		   ETA_BW_DEFAULT, &out->eta_bw) < 0 ||
	    jx_num(x, v, p, "eta_flops", (struct jx_range){ 0, 1, true, false },
		   ETA_FLOPS_DEFAULT, &out->eta_flops) < 0 ||
	    jx_num(x, v, p, "overhead_s", CFG_TIME0,
		   out->pricing == PRICING_ROOFLINE ? 0.0005 : optab_overhead_s,
		   &out->overhead_s) < 0)
		return -1;
	snprintf(out->spec.name, sizeof(out->spec.name), "%s", name);
	if (base && strcmp(name, base->name))
		out->spec.source = NULL; /* figures of another GPU */
	/* the idle draw and the price are the preset's source's only at the
	 * preset's figures (a resolved config states them) */
	if (out->spec.source == NULL ||
	    out->spec.power_idle_w != base->power_idle_w ||
	    out->spec.usd_per_hour != base->usd_per_hour)
		out->spec.market = NULL;
	return 0;
}

/* The link between a replica's GPUs: a preset by name (default: the one
 * the GPU's servers use) or its figures. */
static int read_link(struct jx *x, json_t *v, const char *p,
		     struct cfg_cloud *out)
{
	static const char *const keys[] = { "name", "bw_Bps", "latency_s",
					    "step_s", NULL };
	json_t *l = json_object_get(v, "link");
	const char *name;
	char cp[JX_PTR_MAX];
	int k;

	jx_child(cp, p, "link");
	if (!l && !out->gpu.spec.link) {
		if (out->tp > 1)
			return jx_fail(x, cp, "the link between the GPUs of a "
				       "replica (a preset name, or {\"bw_Bps\", "
				       "\"latency_s\", \"step_s\"}), as /cloud/"
				       "tp is above 1", NULL);
		return 0;
	}
	if (!l || json_is_string(l)) {
		if (jx_enum(x, v, p, "link", gpu_link_names(), out->gpu.spec.link,
			    &k) < 0)
			return -1;
		out->link = *gpu_link_find(gpu_link_names()[k]);
		return 0;
	}
	if (jx_object(x, l, cp, keys) < 0 ||
	    jx_str(x, l, cp, "name", "custom", &name) < 0 ||
	    jx_num(x, l, cp, "bw_Bps", BPS_MIN, JX_REQUIRED, &out->link.bw_Bps) < 0 ||
	    jx_num(x, l, cp, "latency_s", CFG_TIME0, JX_REQUIRED,
		   &out->link.latency_s) < 0 ||
	    jx_num(x, l, cp, "step_s", CFG_TIME0, 0, &out->link.step_s) < 0)
		return -1;
	snprintf(out->link.name, sizeof(out->link.name), "%s", name);
	out->link.source = NULL;
	return 0;
}

#define GB(b) ((b) / 1e9)

/* Refuses weights (the target's and wd of the cloud's drafts) that do not
 * fit the replica's GPUs with the KV cache of one request of need tokens,
 * kv bytes each, saying what would fit. */
static int check_fit(struct jx *x, const struct cfg_cloud *cl, double wd,
		     double kv, double need)
{
	double params = shape_params(&cl->model), mem = cl->gpu.spec.mem_bytes;
	double w = params * cl->weight_bytes, all = w + wd + kv * need;
	double wb = (cl->tp * mem - wd - kv * need) / params;
	char fix[256] = "", kvtext[128] = "";
	int tp = cl->tp;

	if (all / cl->tp <= mem)
		return 0;
	while (tp < 64 && all / tp > mem)
		tp *= 2;
	if (all / tp <= mem)
		snprintf(fix, sizeof(fix), "/cloud/tp %d (%.1f GB a GPU)", tp,
			 GB(all / tp));
	if (wb > 0)
		snprintf(fix + strlen(fix), sizeof(fix) - strlen(fix),
			 "%s/cloud/weight_bytes %.2f or less at tp %d",
			 fix[0] ? ", or " : "", floor(wb * 100) / 100, cl->tp);
	if (need > 0)
		snprintf(kvtext, sizeof(kvtext), " and %.2f GB of KV cache for "
			 "one request (%.0f tokens)", GB(kv * need), need);
	return err_set(x->err, "%s: /cloud/model: %s needs %.1f GB of weights "
		       "(%g bytes a weight)%s%s, %.1f GB a GPU at tp %d, but one %s "
		       "holds %.1f GB; fix: %s", x->file, cl->model.name, GB(w),
		       cl->weight_bytes, wd > 0 ? " with the cloud's draft" : "",
		       kvtext, GB(all / cl->tp), cl->tp, cl->gpu.spec.name,
		       GB(mem), fix[0] ? fix : "a GPU with more memory");
}

/* A GPU's activations at the largest step the budget allows (derived,
 * not measured): max_batch_tokens tokens through a layer's widest
 * tensors (the MLP's two projections, split over tp, and four of the
 * width) in FP16, and FP32 logits for max_num_seqs sequences. The server's
 * own runtime (CUDA context, graphs) is not in it. */
static double activation_bytes(const struct cfg_cloud *cl)
{
	const struct shape *m = &cl->model;

	return (double)cl->max_batch_tokens *
		       (2.0 * m->hidden / cl->tp + 4.0 * m->dim) * 2 +
	       (double)cl->max_num_seqs * m->vocab * 4;
}

static int read_cloud(struct jx *x, json_t *v, const char *p,
		      struct cfg_cloud *out)
{
	static const char *const keys[] = { "replicas", "router", "policy",
		"max_batch_tokens", "prefill_chunk_tokens", "max_num_seqs",
		"window_s", "kv_capacity_tokens", "kv_policy", "block_tokens",
		"watermark", "gpu_memory_utilization", "activation_bytes",
		"context_tokens", "model", "weight_dtype", "weight_bytes",
		"kv_dtype", "tp", "link", "gpu", NULL };
	static const char *const routers[] = { "round_robin", "least_loaded",
					       NULL };
	char cp[JX_PTR_MAX];
	long long tp;
	int router, policy, kv, wd, kd;

	if (jx_object(x, v, p, keys) < 0 ||
	    jx_int(x, v, p, "replicas", 1, 1000000, 1, &out->replicas) < 0 ||
	    jx_enum(x, v, p, "router", routers, "round_robin", &router) < 0 ||
	    jx_enum(x, v, p, "policy", cfg_sched_names, "continuous",
		    &policy) < 0 ||
	    jx_int(x, v, p, "max_batch_tokens", 1, 1 << 24, 4096,
		   &out->max_batch_tokens) < 0 ||
	    jx_int(x, v, p, "prefill_chunk_tokens", 1, 1 << 24, 512,
		   &out->prefill_chunk_tokens) < 0 ||
	    jx_int(x, v, p, "max_num_seqs", 1, 1 << 24, 256,
		   &out->max_num_seqs) < 0 ||
	    jx_num(x, v, p, "window_s", CFG_TIME0, CFG_WINDOW_DEFAULT_S,
		   &out->window_s) < 0 ||
	    jx_enum(x, v, p, "kv_policy", cfg_kv_names, "paged", &kv) < 0 ||
	    jx_int(x, v, p, "block_tokens", 1, 1 << 16, 16,
		   &out->block_tokens) < 0 ||
	    jx_num(x, v, p, "watermark", (struct jx_range){ 0, 1, false, true },
		   0.01, &out->watermark) < 0 ||
	    jx_num(x, v, p, "gpu_memory_utilization",
		   (struct jx_range){ 0, 1, true, false }, 0.9,
		   &out->gpu_memory_utilization) < 0 ||
	    read_model(x, v, p, "model", shape_find("llama2-7b"), "llama2-7b",
		       &out->model) < 0 ||
	    jx_enum(x, v, p, "weight_dtype", gpu_dtype_names(), "fp16", &wd) < 0 ||
	    jx_enum(x, v, p, "kv_dtype", gpu_dtype_names(), "fp16", &kd) < 0 ||
	    ((out->model.context > 0 || json_object_get(v, "context_tokens")) &&
	     jx_int(x, v, p, "context_tokens", 1, 1LL << 32,
		    out->model.context > 0 ? out->model.context
					   : JX_REQUIRED_INT,
		    &out->context_tokens) < 0) ||
	    jx_num(x, v, p, "weight_bytes", CFG_WEIGHT_BYTES,
		   gpu_dtype_find(gpu_dtype_names()[wd])->bytes,
		   &out->weight_bytes) < 0 ||
	    jx_int(x, v, p, "tp", 1, 64, 1, &tp) < 0 ||
	    read_gpu(x, object_or_new(v, "gpu"), jx_child(cp, p, "gpu"),
		     &out->gpu) < 0)
		return -1;
	out->router = (enum router_kind)router;
	out->policy = (enum sched_policy)policy;
	out->kv_policy = (enum kv_policy)kv;
	out->weight_dtype = gpu_dtype_find(gpu_dtype_names()[wd]);
	out->kv_dtype = gpu_dtype_find(gpu_dtype_names()[kd]);
	out->tp = (int)tp;
	/* tensor parallelism splits the attention heads (vLLM refuses a tp
	 * that does not divide them; KV heads split, or replicate where
	 * fewer than the GPUs) */
	if (out->model.n_heads > 0 && out->model.n_kv_heads > 0 &&
	    (out->model.n_heads % out->tp ||
	     (out->model.n_kv_heads % out->tp &&
	      out->tp % out->model.n_kv_heads))) {
		char cp2[JX_PTR_MAX];

		return err_set(x->err, "%s: %s: expected a tp that divides %s's %d "
			       "attention heads, and its %d KV heads or a multiple "
			       "of them, got %d", x->file, jx_child(cp2, p, "tp"),
			       out->model.name, out->model.n_heads,
			       out->model.n_kv_heads, out->tp);
	}
	if (jx_num(x, v, p, "activation_bytes", CFG_BYTES,
		   activation_bytes(out), &out->activation_bytes) < 0)
		return -1;
	/* the weights alone first: the groups' checks assume they fit */
	return read_link(x, v, p, out) < 0 || check_fit(x, out, 0, 0, 0) < 0 ||
	       read_table(x, json_object_get(v, "gpu"), jx_child(cp, p, "gpu"),
			  "table", out, out->model.name, &out->gpu.vtab,
			  &out->gpu.ops) < 0 ||
	       read_tables(x, json_object_get(v, "gpu"), jx_child(cp, p, "gpu"),
			   out) < 0
		       ? -1 : 0;
}

struct cfg_lengths cfg_mean_lengths(const struct cfg_group *g)
{
	const struct wl_trace *t = &g->wl_trace;
	struct cfg_lengths m = { 0, 0 };

	if (g->workload.arrival != ARRIVAL_TRACE)
		return (struct cfg_lengths){
			dist_mean(&g->workload.prompt_tokens),
			dist_mean(&g->workload.output_tokens) };
	for (size_t i = 0; i < t->n; i++) {
		m.prompt_tokens += t->rows[i].prompt;
		m.output_tokens += t->rows[i].output;
	}
	if (t->n) {
		m.prompt_tokens /= (double)t->n;
		m.output_tokens /= (double)t->n;
	}
	return m;
}

/* Tokens of the longest request a group draws (its mean, where the
 * lengths have no bound), and whether that is the longest. */
static double request_tokens(const struct cfg_group *g, bool *longest)
{
	const struct cfg_workload *w = &g->workload;
	double n = 0, lp, lo;

	if (w->arrival == ARRIVAL_TRACE) {
		for (size_t i = 0; i < g->wl_trace.n; i++)
			if (g->wl_trace.rows[i].prompt + g->wl_trace.rows[i].output > n)
				n = g->wl_trace.rows[i].prompt +
				    g->wl_trace.rows[i].output;
		*longest = true;
		return n;
	}
	lp = dist_max(&w->prompt_tokens);
	lo = dist_max(&w->output_tokens);
	*longest = isfinite(lp) && isfinite(lo);
	if (!*longest) {
		lp = dist_mean(&w->prompt_tokens);
		lo = dist_mean(&w->output_tokens);
	}
	/* as the draws are: whole, 1 to WL_TOKENS_MAX */
	return fmin(fmax(1, round(lp)), WL_TOKENS_MAX) +
	       fmin(fmax(1, round(lo)), WL_TOKENS_MAX);
}

/* ", TRACE:LINE" (or ", TRACE: request N"): where g's trace has its first
 * request of tokens tokens, in buf (n bytes); "" for a group without one */
static void trace_row_of(const struct cfg_group *g, double tokens, char *buf,
			 size_t n)
{
	const struct wl_trace *t = &g->wl_trace;
	char at[64];

	*buf = '\0';
	for (size_t i = 0; g->workload.arrival == ARRIVAL_TRACE && i < t->n; i++)
		if (t->rows[i].prompt + t->rows[i].output == tokens) {
			snprintf(buf, n, ", %.1000s%s", g->workload.trace,
				 wl_trace_where(t, i, at, sizeof(at)));
			return;
		}
}

/* Weights and KV cache against the replica's memory: the weights split
 * over tp GPUs with one request's KV cache must fit each GPU; the KV
 * capacity defaults to what the memory holds beside the weights, and may
 * not exceed it nor fall below one request. The cloud's drafts (cloud_spec)
 * add their weights, and their KV to every token's. */
static int fit_memory(struct jx *x, struct cfg *c, json_t *v)
{
	struct cfg_cloud *cl = &c->cloud;
	double w = shape_params(&cl->model) * cl->weight_bytes, wd = 0;
	double kb = cl->kv_dtype->bytes;
	double kv = kb * shape_kv_elems_per_token(&cl->model), kvd = 0;
	double need = 0, mem = cl->gpu.spec.mem_bytes, holds, B;
	long long blocks, keep;
	char fit[256];
	const struct cfg_group *big = NULL;
	bool longest = true;

	for (size_t i = 0; i < c->n_groups; i++) {
		const struct cfg_group *g = &c->groups[i];
		const struct cfg_draft *d = &g->proto.draft;
		bool l, seen = false;
		double n;

		if (!g->proto.caps.uses_cloud)
			continue;
		if ((n = request_tokens(g, &l)) > need) {
			need = n;
			big = g;
			longest = l;
		}
		if (!g->proto.caps.cloud_drafts)
			continue;
		for (size_t j = 0; j < i; j++)
			seen |= c->groups[j].proto.caps.cloud_drafts &&
				cfg_draft_same(&c->groups[j].proto.draft, d);
		if (!seen)
			wd += shape_params(&d->model) * d->weight_bytes;
		kvd = fmax(kvd, kb * shape_kv_elems_per_token(&d->model));
	}
	kv += kvd;
	cl->kv_token_bytes = kv;
	if (big && longest && cl->context_tokens > 0 &&
	    need > (double)cl->context_tokens) {
		char row[1200];

		trace_row_of(big, need, row, sizeof(row));
		return err_set(x->err, "%s: /tenants/%zu/workload: its longest "
			       "request, %.0f tokens (prompt and output%s), "
			       "exceeds the %lld positions of /cloud/"
			       "context_tokens (%s's context): shorten it, or "
			       "give a model with a longer context", x->file,
			       (size_t)(big - c->groups), need, row,
			       cl->context_tokens, cl->model.name);
	}
	if (check_fit(x, cl, wd, kv, need) < 0)
		return -1;
	/* whole blocks of what the server's share of memory holds beside the
	 * weights and the activations */
	B = (double)cl->block_tokens;
	holds = B * floor(fmax(0, cl->tp * (mem * cl->gpu_memory_utilization -
					    cl->activation_bytes) - w - wd) /
			  kv / B);
	/* the arithmetic, for the messages of a cache that does not fit */
	snprintf(fit, sizeof(fit), "%d x %.1f GB x %g (gpu_memory_utilization), "
		 "less %.2f GB of activations a GPU and %.1f GB of weights",
		 cl->tp, GB(mem), cl->gpu_memory_utilization,
		 GB(cl->activation_bytes), GB(w + wd));
	if (holds < 1 && !json_object_get(v, "kv_capacity_tokens"))
		return err_set(x->err, "%s: /cloud: no KV cache fits: %s, leaves "
			       "no block of %lld tokens of %.0f bytes each: raise "
			       "gpu_memory_utilization or tp, or lower "
			       "activation_bytes", x->file, fit, cl->block_tokens,
			       kv);
	if (jx_int(x, v, "/cloud", "kv_capacity_tokens", 1, LLONG_MAX,
		   (long long)holds, &cl->kv_capacity_tokens) < 0)
		return -1;
	if ((double)cl->kv_capacity_tokens > holds)
		return err_set(x->err, "%s: /cloud/kv_capacity_tokens: %lld "
			       "tokens do not fit: %s, holds %.0f tokens of %.0f "
			       "bytes each in blocks of %lld", x->file,
			       cl->kv_capacity_tokens, fit, holds, kv,
			       cl->block_tokens);

	/* what one request may hold: the pool's whole blocks, less those a
	 * growing policy's watermark keeps free */
	blocks = cfg_kv_blocks(cl);
	keep = cfg_kv_grows(cl->kv_policy) ? cfg_kv_watermark_blocks(cl) : 0;
	if (big && (double)((blocks - keep) * cl->block_tokens) < need) {
		char row[1200], kept[64] = "";

		trace_row_of(big, need, row, sizeof(row));
		if (keep)
			snprintf(kept, sizeof(kept), ", %lld kept free by the "
				 "watermark", keep);
		return err_set(x->err, "%s: /cloud/kv_capacity_tokens: %lld "
			       "tokens (%lld blocks of %lld%s) are fewer than "
			       "one request of group \"%s\" needs (%.0f tokens: "
			       "prompt and output, %s%s)", x->file,
			       cl->kv_capacity_tokens, blocks, cl->block_tokens,
			       kept, big->name, need,
			       longest ? "the longest its workload draws"
				       : "at their mean lengths", row);
	}
	return 0;
}

static int read_top(struct cfg *c, struct jx *x)
{
	static const char *const keys[] = { "name", "seed", "horizon_s",
		"warmup_s", "slo", "protocol", "tenants", "cloud", NULL };
	static const struct cfg_slo def_slo = { 2.0, 0.1 };
	char cp[JX_PTR_MAX], base[256];
	const char *slash = strrchr(c->file, '/'), *target_text;
	json_t *doc = c->doc, *groups, *proto, *cloud;
	struct cfg_protocol unused = { 0 };
	long long seed;
	bool named;

	snprintf(base, sizeof(base), "%s", slash ? slash + 1 : c->file);
	base[strcspn(base, ".")] = '\0';
	named = json_object_get(doc, "name") != NULL; /* jx_str fills it in */
	if (jx_object(x, doc, "", keys) < 0 ||
	    jx_str(x, doc, "", "name", base, &c->name) < 0 ||
	    cfg_check_name(x, doc, "", c->name, true, named) < 0 ||
	    jx_int(x, doc, "", "seed", 0, LLONG_MAX, 1, &seed) < 0 ||
	    jx_num(x, doc, "", "horizon_s", CFG_TIME0, 0, &c->horizon_s) < 0 ||
	    jx_num(x, doc, "", "warmup_s", CFG_TIME0, 0, &c->warmup_s) < 0 ||
	    read_slo(x, object_or_new(doc, "slo"), "/slo", &def_slo,
		     &c->slo) < 0)
		return -1;
	c->seed = (uint64_t)seed;
	if (c->horizon_s > 0 && c->warmup_s >= c->horizon_s)
		return err_set(x->err, "%s: /warmup_s: %g s is not before the "
			       "horizon (/horizon_s %g s): no request would be "
			       "measured", x->file, c->warmup_s, c->horizon_s);
	/* the default protocol is async: absent, or given without its kind
	 * (as --set /protocol/gamma=6 makes it) */
	proto = json_object_get(doc, "protocol");
	if (!proto)
		json_object_set_new(doc, "protocol", proto = json_object());
	if (json_is_object(proto) && !json_object_get(proto, "kind"))
		json_object_set_new(proto, "kind",
				    json_string(cfg_proto_names[PROTO_ASYNC]));
	cloud = object_or_new(doc, "cloud");
	if (read_cloud(x, cloud, "/cloud", &c->cloud) < 0)
		return -1;
	target_text = json_string_value(json_object_get(cloud, "model"));
	/* its draft is read in each group that takes a copy of it; one given
	 * here is checked here too, so that its errors name this place */
	if (read_protocol(x, proto, "/protocol", &unused) < 0)
		return -1;
	if (json_object_get(proto, "draft")) {
		json_t *d = json_deep_copy(json_object_get(proto, "draft"));
		int rc = read_draft(x, d, "/protocol/draft", &c->cloud,
				    target_text, &unused.draft);

		vtab_release(&unused.draft.table);
		json_decref(d);
		if (rc < 0)
			return -1;
	}
	groups = json_object_get(doc, "tenants");
	if (!json_is_array(groups) || json_array_size(groups) == 0)
		return jx_fail(x, "/tenants", "a non-empty array of tenant groups",
			       groups);
	c->n_groups = json_array_size(groups);
	c->groups = xcalloc(c->n_groups, sizeof(*c->groups));
	for (size_t i = 0; i < c->n_groups; i++) {
		if (read_group(x, json_array_get(groups, i),
			       jx_index(cp, "/tenants", i), proto, c,
			       target_text, i, &c->groups[i]) < 0)
			return -1;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(c->groups[j].name, c->groups[i].name))
				return err_set(x->err, "%s: %s/name: group name "
					       "\"%s\" is used twice", x->file,
					       cp, c->groups[i].name);
	}
	return fit_memory(x, c, cloud);
}

int cfg_load_from(struct cfg *c, const char *path, const char *const *sets,
		  size_t n_sets, const char *by, struct err *e)
{
	json_t *doc = jx_load(path, e);

	if (!doc) {
		*c = (struct cfg){ 0 };
		return -1;
	}
	return cfg_parse(c, doc, path, sets, n_sets, by, e);
}

int cfg_load(struct cfg *c, const char *path, const char *const *sets,
	     size_t n_sets, struct err *e)
{
	return cfg_load_from(c, path, sets, n_sets, "--set", e);
}

/* Adds a line to c's warnings. */
static void cfg_warn(struct cfg *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void cfg_warn(struct cfg *c, const char *fmt, ...)
{
	char line[512];
	size_t have = c->warnings ? strlen(c->warnings) : 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	c->warnings = xrealloc(c->warnings, have + strlen(line) + 2);
	sprintf(c->warnings + have, "%s\n", line);
}

/* What a group's protocol is given that it does not use:
 * - a window it does not keep: async with one block in flight runs as
 *   sync, and only async keeps more than one (cloud_only and edge_only
 *   send no blocks at all);
 * - a gamma other than the default under a protocol that drafts nothing
 *   (a config that `run` resolved carries the default there). */
static void protocol_warnings(struct cfg *c)
{
	bool top_said = false;

	for (size_t i = 0; i < c->n_groups; i++) {
		const struct cfg_protocol *pr = &c->groups[i].proto;
		char p[JX_PTR_MAX], pg[JX_PTR_MAX], pw[JX_PTR_MAX];
		json_t *w, *g;

		/* a group that took the config's protocol: said once, there */
		if (!c->groups[i].own_protocol) {
			if (top_said)
				continue;
			top_said = true;
			snprintf(p, sizeof(p), "/protocol");
		} else {
			snprintf(p, sizeof(p), "/tenants/%zu/protocol", i);
		}
		g = jx_at(c->doc, jx_child(pg, p, "gamma"));
		if (g && !cfg_proto_drafts(&pr->caps) &&
		    json_integer_value(g) != CFG_GAMMA_DEFAULT)
			cfg_warn(c, "%s: %lld is not used: %s drafts nothing", pg,
				 (long long)json_integer_value(g),
				 cfg_proto_names[pr->kind]);
		if (!(w = jx_at(c->doc, jx_child(pw, p, "window"))))
			continue;
		if (pr->caps.windowed && pr->window == 1)
			cfg_warn(c, "%s: 1 makes %s sync, event for event: give "
				 "a window of 2 or more (its default is 4), or "
				 "the kind sync", pw, cfg_proto_names[pr->kind]);
		else if (!pr->caps.windowed && json_integer_value(w) > 1)
			cfg_warn(c, "%s: %lld is not used: %s %s", pw,
				 (long long)json_integer_value(w),
				 cfg_proto_names[pr->kind],
				 cfg_proto_drafts(&pr->caps)
				 ? "keeps one block in flight (only async "
				   "keeps more)"
				 : "sends no draft blocks");
	}
}

/* The roofline's fractions given other than their defaults where the
 * cloud is not priced by the roofline: a measured table prices it, or
 * the derived operator table (a resolved config carries the defaults, so
 * rerunning one stays quiet). */
static void gpu_warnings(struct cfg *c)
{
	static const struct {
		const char *key;
		double def;
	} etas[] = { { "eta_bw", ETA_BW_DEFAULT },
		     { "eta_flops", ETA_FLOPS_DEFAULT } };
	const struct cfg_gpu *g = &c->cloud.gpu;
	const char *by = g->vtab.nt || g->ops.tp
		? "the measured table it reads"
		: g->pricing == PRICING_DERIVED
		? "its derived operator table (give \"pricing\": "
		  "\"roofline\" to price it by these fractions)"
		: NULL;

	for (size_t k = 0; by && k < sizeof(etas) / sizeof(etas[0]); k++) {
		char p[64];
		json_t *v;

		snprintf(p, sizeof(p), "/cloud/gpu/%s", etas[k].key);
		if ((v = jx_at(c->doc, p)) && json_number_value(v) != etas[k].def)
			cfg_warn(c, "%s: %g is not used: the cloud is priced by "
				 "%s", p, json_number_value(v), by);
	}
}

/* A batching window under a policy that waits for none (the default,
 * 0.002 s, is what a resolved config holds: rerunning one stays quiet). */
static void cloud_warnings(struct cfg *c)
{
	const struct cfg_cloud *cl = &c->cloud;

	if (cfg_sched_hold_s(cl->policy, cl->window_s) == 0 &&
	    cl->window_s != CFG_WINDOW_DEFAULT_S)
		cfg_warn(c, "/cloud/window_s: %g is not used: the %s policy "
			 "waits for no batch to fill (the window policy does)",
			 cl->window_s, cfg_sched_names[cl->policy]);
}

/* What a workload says that the run will not do as written:
 * - a trace whose first request comes more than a day in: its times are
 *   likely counted from an epoch, and the run would spend that idle time
 *   in every rate and cost;
 * - a Poisson rate that falls to 0 for ever before a tenant can expect
 *   its requests: the rest never arrive;
 * - a rate under the closed arrival, which takes none;
 * - under a trace, what the trace gives instead (the requests, their
 *   lengths, their times), and a text trace's keys beside a timed one. */
static void workload_warnings(struct cfg *c)
{
	static const char *const rate_keys[] = { "rate_per_s", "rate_scale" };
	static const char *const trace_gives[] = { "requests", "prompt_tokens",
		"output_tokens", "think_s", "start_s" };
	static const char *const text_keys[] = { "trace_tokenizer",
						 "trace_rate_per_s" };

	for (size_t i = 0; i < c->n_groups; i++) {
		const struct cfg_workload *w = &c->groups[i].workload;
		const struct wl_trace *t = &c->groups[i].wl_trace;
		const bool trace = w->arrival == ARRIVAL_TRACE;
		/* arrivals from when a tenant starts (its mean start) */
		const double start_s = dist_mean(&w->start_s);
		const double come = w->arrival == ARRIVAL_POISSON
			? rate_arrivals_bound(&w->rate, start_s) : INFINITY;
		/* a text trace's keys given (their defaults, "" and 0, are
		 * what a resolved config holds: rerunning it stays quiet) */
		const bool text_given[] = { w->trace_tokenizer != NULL,
					    w->trace_rate_per_s > 0 };
		char p[JX_PTR_MAX];
		json_t *given;

		snprintf(p, sizeof(p), "/tenants/%zu/workload", i);
		given = jx_at(c->doc, p);
		if (t->n && t->rows[0].arrive_s > EPOCH_HINT_S)
			cfg_warn(c, "%s/trace: its first request arrives %.0f "
				 "s (%.1f days) after the run starts: arrival "
				 "times count from 0; subtract the first to "
				 "replay it from the start", p,
				 t->rows[0].arrive_s,
				 t->rows[0].arrive_s / EPOCH_HINT_S);
		if (come < (double)w->requests)
			cfg_warn(c, "%s/rate_per_s: the rate is 0 from %g s on, "
				 "with no period_s to repeat the table: of a "
				 "tenant's %lld requests about %.3g arrive "
				 "before then (from its start, %g s), and the "
				 "rest never do (give a period_s, or fewer "
				 "requests)", p, rate_zero_from_s(&w->rate),
				 w->requests, come, start_s);
		for (size_t k = 0; trace && k < sizeof(trace_gives) /
						sizeof(trace_gives[0]); k++)
			if (json_object_get(given, trace_gives[k]))
				cfg_warn(c, "%s/%s: not used: the trace gives "
					 "the requests, their lengths and "
					 "times", p, trace_gives[k]);
		for (size_t k = 0; trace && !t->text && k < 2; k++)
			if (text_given[k])
				cfg_warn(c, "%s/%s: not used: the %s trace "
					 "gives its own lengths and times (a "
					 "sharegpt trace takes it)", p,
					 text_keys[k], t->format);
		for (size_t k = 0; k < 2; k++)
			if (w->arrival != ARRIVAL_POISSON &&
			    json_object_get(given, rate_keys[k]))
				cfg_warn(c, "%s/%s: not used: %s; give "
					 "\"arrival\": \"poisson\" for a rate",
					 p, rate_keys[k], trace
					 ? "the trace gives the arrivals"
					 : "the arrival is closed, each "
					   "tenant's requests one after "
					   "another, think_s apart");
	}
}

/* An error at or below a pointer an override set (at[i], its "-" read as
 * the index it appended at) says it comes from the override: the value is
 * not in the file it names; one above such a pointer says the override
 * is below it. by names the overrides ("--set"). */
static void said_by_set(const char *file, const char *const *sets,
			char (*at)[JX_PTR_MAX], size_t n_sets, const char *by,
			struct err *e)
{
	size_t head = strlen(file) + 2, len = strlen(e->msg);
	const char *ptr = e->msg + head, *end;

	if (strncmp(e->msg, file, head - 2) || strncmp(e->msg + head - 2, ": ", 2) ||
	    *ptr != '/' || !(end = strstr(ptr, ": ")))
		return;
	for (size_t i = 0; i < n_sets; i++) {
		size_t n = strlen(at[i]), np = (size_t)(end - ptr);
		bool from = np >= n && !strncmp(ptr, at[i], n) &&
			    (n == np || ptr[n] == '/');
		bool below = n > np && !strncmp(ptr, at[i], np) &&
			     at[i][np] == '/';

		if (from || below) {
			snprintf(e->msg + len, sizeof(e->msg) - len, " (%s %s "
				 "%.*s)", from ? "from" : "with", by,
				 (int)(sizeof(e->msg) / 4), sets[i]);
			return;
		}
	}
}

int cfg_parse(struct cfg *c, json_t *doc, const char *file,
	      const char *const *sets, size_t n_sets, const char *by,
	      struct err *e)
{
	struct jx x = { .file = file, .err = e };
	char (*at)[JX_PTR_MAX] = xcalloc(n_sets + 1, JX_PTR_MAX);

	*c = (struct cfg){ .file = xstrdup(file), .doc = doc };
	for (size_t i = 0; i < n_sets; i++) {
		const char *eq = strchr(sets[i], '=');
		char ptr[JX_PTR_MAX];

		if (!eq || eq == sets[i] || (size_t)(eq - sets[i]) >= sizeof(ptr)) {
			err_set(e, "--set '%.200s%s': expected POINTER=VALUE, e.g. "
				"/cloud/replicas=2%s", sets[i],
				strlen(sets[i]) > 200 ? "..." : "",
				eq && (size_t)(eq - sets[i]) >= sizeof(ptr)
				? ", a pointer shorter than 256 bytes" : "");
			goto fail;
		}
		snprintf(ptr, sizeof(ptr), "%.*s", (int)(eq - sets[i]), sets[i]);
		if (jx_set(c->doc, ptr, eq + 1, at[i], e) < 0)
			goto fail;
	}
	if (read_top(c, &x) < 0) {
		if (by)
			said_by_set(file, sets, at, n_sets, by, e);
		goto fail;
	}
	free(at);
	protocol_warnings(c);
	gpu_warnings(c);
	cloud_warnings(c);
	workload_warnings(c);
	return 0;
fail:
	free(at);
	cfg_release(c);
	return -1;
}

void cfg_release(struct cfg *c)
{
	for (size_t i = 0; i < c->n_groups; i++)
		group_release(&c->groups[i]);
	free(c->groups);
	vtab_release(&c->cloud.gpu.vtab);
	wake_release(&c->cloud.gpu.wake);
	free(c->file);
	free(c->warnings);
	json_decref(c->doc);
	*c = (struct cfg){ 0 };
}

char *cfg_resolved(const struct cfg *c)
{
	return jx_dumps_exact(c->doc);
}

int cfg_cloud_default(struct cfg_cloud *cl, const char *gpu,
		      const struct shape *model)
{
	const struct gpu_spec *g = gpu_preset_find(gpu);

	*cl = (struct cfg_cloud){ .replicas = 1, .weight_bytes = 2, .tp = 1,
		.weight_dtype = gpu_dtype_find("fp16"),
		.kv_dtype = gpu_dtype_find("fp16"),
		.gpu = { .eta_bw = ETA_BW_DEFAULT,
			 .eta_flops = ETA_FLOPS_DEFAULT, .overhead_s = 0.0005,
			 .pricing = PRICING_ROOFLINE } };
	if (!g)
		return -1;
	cl->model = *model;
	cl->gpu.preset = g->name;
	cl->gpu.spec = *g;
	return 0;
}

void cfg_wan_release(struct cfg_wan *w)
{
	dist_release(&w->rtt_s);
	dist_release(&w->rtt_after_s);
}

int cfg_wan_read(const char *name, json_t *v, struct cfg_wan *out,
		 struct err *e)
{
	struct jx x = { .file = name, .err = e };

	*out = (struct cfg_wan){ 0 };
	return read_wan(&x, v, "", out);
}
