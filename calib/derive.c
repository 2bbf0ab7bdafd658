/* derive.c: edge profiles for devices that cannot be run here, from the
 * device library (devlib.h) and a profile measured here (docs/calib.md).
 *
 * A derived profile takes its level from the device model of dfit.h,
 * fitted on the library's published figures with the device's own in: the
 * decode tokens/s it predicts for the model at a mean context of
 * FIGURE_CTX (llama-bench's tg128), and its prefill tokens/s over
 * FIGURE_PROMPT tokens (pp512). It takes its shape from a profile measured
 * here: how a draft step grows with the context (scaled like the measured
 * model's own predicted decode, times the KV bytes a position of the
 * model over the measured one's) and the fixed part of a prefill (scaled
 * like its per-token part). The model need not be the measured one: any
 * shape by name or file. The profile carries the model's held-out error
 * band (dfit_fit) and how far the model lies from the figures it was
 * fitted on. */
#include "derive.h"
#include "devlib.h"
#include "dfit.h"
#include "mload.h"

#include "jx.h"
#include "mem.h"
#include "prof.h"
#include "shape.h"
#include "order.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIGURE_CTX 64     /* tg128: a mean context of 64 */
#define FIGURE_PROMPT 512 /* pp512: a prefill's base over 512 tokens */

/* The weights a decoding token reads (its layers and the classifier; of
 * the embedding table one row) and what they weigh in quant's format */
static double read_params(const struct shape *s)
{
	return shape_active_params(s) - (s->tied ? 0 : (double)s->vocab * s->dim);
}

/* The measured profile's model as a shape: the built-in of its name, else
 * its dimensions */
static void measured_shape(const json_t *measured, struct shape *s)
{
	const json_t *m = json_object_get(measured, "model");
	const struct shape *b = shape_find(json_string_value(json_object_get(m,
								      "name")));

	if (b) {
		*s = *b;
		return;
	}
	*s = (struct shape){ .arch = "llama" };
	snprintf(s->name, sizeof(s->name), "%s",
		 json_string_value(json_object_get(m, "name")));
	s->dim = (int)json_integer_value(json_object_get(m, "dim"));
	s->hidden = (int)json_integer_value(json_object_get(m, "hidden"));
	s->n_layers = (int)json_integer_value(json_object_get(m, "layers"));
	s->n_heads = (int)json_integer_value(json_object_get(m, "heads"));
	s->n_kv_heads = (int)json_integer_value(json_object_get(m, "kv_heads"));
	s->vocab = (int)json_integer_value(json_object_get(m, "vocab"));
}

/* {axis, seconds}: base + per x at each of the measured series' x */
static json_t *line(const json_t *series, const char *axis, double base,
		    double per)
{
	json_t *t = json_array();
	const json_t *xs = json_object_get(series, axis);
	size_t i;
	json_t *v;

	json_array_foreach(xs, i, v)
		json_array_append_new(t, json_real(base + per *
						   json_number_value(v)));
	return json_pack("{s:O,s:o}", axis, xs, "seconds", t);
}

static json_t *band_json(const struct dfit_band *b)
{
	if (!b->n)
		return json_pack("{s:i,s:s}", "figures", 0, "from", b->from);
	return json_pack("{s:i,s:f,s:f,s:f,s:s}", "figures", b->n, "lowest",
			 b->lo, "highest", b->hi, "median_abs", b->median_abs,
			 "from", b->from);
}

/* How far the model lies from d's figures: its weights against theirs
 * (within 10% of their range counts as inside), in words */
static json_t *extrapolation(const struct calib_device *d, double params)
{
	double lo = INFINITY, hi = 0;
	char s[256];

	for (int i = 0; i < d->nfig; i++)
		if (d->fig[i].used) {
			lo = fmin(lo, d->fig[i].params);
			hi = fmax(hi, d->fig[i].params);
		}
	if (hi == 0)
		snprintf(s, sizeof(s), "the device has no figure of its own: its "
			 "level is its class's fit on its datasheet");
	else if (params < lo / 1.1 || params > 1.1 * hi)
		snprintf(s, sizeof(s), "%.2gB weights, %.1fx %s the device's "
			 "figures (%.2gB to %.2gB)", params / 1e9,
			 params > hi ? params / hi : lo / params,
			 params > hi ? "beyond the largest of" :
				       "below the smallest of", lo / 1e9, hi / 1e9);
	else
		snprintf(s, sizeof(s), "%.2gB weights, inside the device's "
			 "figures (%.2gB to %.2gB)", params / 1e9, lo / 1e9,
			 hi / 1e9);
	return json_string(s);
}

static json_t *figures_json(const struct dfit *m, const struct calib_device *d)
{
	json_t *figs = json_array();

	for (int i = 0; i < d->nfig; i++) {
		const struct calib_figure *g = &d->fig[i];
		double pred = dfit_predict(m, d, g);

		json_array_append_new(figs, json_pack(
			"{s:s,s:s,s:s,s:s,s:i,s:f,s:b,s:f,s:s}", "model", g->model,
			"quant", g->quant, "backend", g->backend, "test",
			g->prefill ? "pp" : "tg", "threads", g->threads,
			"published_tokens_per_s", g->tokens_per_s, "used", g->used,
			"model_tokens_per_s", pred, "source", g->source));
	}
	return figs;
}

json_t *calib_derive(const json_t *measured, const char *from_path,
		     const struct calib_device *d, const struct shape *model,
		     int kernel, const char *dir, const json_t *prov,
		     struct err *e)
{
	const json_t *fit = json_object_get(measured, "fit");
	double b0 = json_number_value(json_object_get(fit, "draft_base_s"));
	double s0 = json_number_value(json_object_get(fit, "draft_per_ctx_s"));
	double pb0 = json_number_value(json_object_get(fit, "prefill_base_s"));
	double pt0 = json_number_value(json_object_get(fit,
						       "prefill_per_token_s"));
	const char *acts = json_string_value(json_object_get(measured,
							      "prefill_activations"));
	bool int8 = acts && !strcmp(acts, "int8");
	struct shape mp;
	struct quant q;
	struct dfit m;
	double bits, pm, pmp, t_dec, t_mp, t_pre, slope, base, c_pre;
	json_t *out, *pw, *model_json;

	if (json_is_true(json_object_get(measured, "derived")))
		return err_set(e, "%s: is itself derived; derive from a measured "
			       "profile", from_path), NULL;
	if (mload_quant_parse(json_string_value(json_object_get(measured, "quant")),
			&q, e) < 0)
		return err_prefix(e, "%s: /quant", from_path), NULL;
	if (dfit_fit(&m, d, dir, kernel, e) < 0)
		return NULL;
	measured_shape(measured, &mp);
	if (!model)
		model = &mp;
	bits = lin_format_bits(q.format, q.group);
	pm = read_params(model);
	pmp = read_params(&mp);
	t_dec = 1 / dfit_decode_tps(&m, d, pm, pm * bits / 8, d->threads);
	t_mp = 1 / dfit_decode_tps(&m, d, pmp, pmp * bits / 8, d->threads);
	/* a position's KV read grows as the weights' stream does here */
	slope = s0 * t_mp / (b0 + FIGURE_CTX * s0) *
		shape_kv_elems_per_token(model) / shape_kv_elems_per_token(&mp);
	base = t_dec - FIGURE_CTX * slope;
	if (base < 0)
		return err_set(e, "%s: the context term at %d positions (%.3g s) "
			       "exceeds the predicted step (%.3g s)", from_path,
			       FIGURE_CTX, FIGURE_CTX * slope, t_dec), NULL;
	t_pre = 1 / dfit_prefill_tps(&m, d, pm, d->threads, int8, kernel);
	c_pre = t_pre / (pb0 / FIGURE_PROMPT + pt0);
	model_json = json_pack("{s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:s}", "name",
			       model->name, "dim", model->dim, "hidden",
			       model->hidden, "layers", model->n_layers, "heads",
			       model->n_heads, "kv_heads", model->n_kv_heads,
			       "vocab", model->vocab, "weights", model == &mp ?
			       json_string_value(json_object_get(json_object_get(
				       measured, "model"), "weights")) : "none");
	out = json_deep_copy(measured);
	/* the kernel set is the measuring machine's: the derivation says it;
	 * the draft step is the device's published figure, not this
	 * forward's, whatever its activations */
	json_object_del(out, "kernel");
	json_object_del(out, "decode_activations");
	json_object_set_new(out, "device", json_string(d->name));
	json_object_set_new(out, "derived", json_true());
	json_object_set_new(out, "model", model_json);
	json_object_set_new(out, "stream_gbs",
			    json_real(dfit_stream_gbs(&m, d, d->threads)));
	json_object_set_new(out, "peak_gflops", json_real(d->fp32_gflops));
	json_object_set_new(out, "int8_gops", json_real(d->int8_gops));
	json_object_set_new(out, "threads", json_integer(d->threads));
	json_object_set_new(out, "draft", line(json_object_get(measured, "draft"),
					       "ctx", base, slope));
	json_object_set_new(out, "prefill", line(json_object_get(measured,
		"prefill"), "tokens", c_pre * pb0, c_pre * pt0));
	json_object_set_new(out, "fit", json_pack(
		"{s:f,s:f,s:f,s:f,s:O,s:O}", "draft_base_s", base,
		"draft_per_ctx_s", slope, "prefill_base_s", c_pre * pb0,
		"prefill_per_token_s", c_pre * pt0, "draft_max_rel_residual",
		json_object_get(fit, "draft_max_rel_residual"),
		"prefill_max_rel_residual",
		json_object_get(fit, "prefill_max_rel_residual")));
	json_object_del(out, "power");
	if (d->power_busy_w > 0) { /* the device file's, with its source */
		const json_t *src = json_object_get(json_object_get(d->doc,
			"sources"), "power");

		pw = json_pack("{s:f}", "busy_w", d->power_busy_w);
		if (d->power_idle_w > 0)
			json_object_set_new(pw, "idle_w", json_real(d->power_idle_w));
		json_object_set_new(pw, "source", json_string(
			json_is_string(src) ? json_string_value(src) :
			"the device file gives none"));
		json_object_set_new(out, "power", pw);
	}
	json_object_set_new(out, "derivation", json_pack(
		"{s:s,s:s,s:s,s:{s:s,s:f,s:f,s:s*},s:{s:f,s:f,s:f,s:s,s:s,s:s},"
		"s:{s:f,s:f},s:{s:o,s:o},s:o,s:{s:i,s:f,s:f,s:f},s:o,s:s,s:O}",
		"from", from_path, "device_file", d->path, "measured_device",
		json_string_value(json_object_get(measured, "device")),
		"model", "name", model->name, "weights_read", pm, "bytes_read",
		pm * bits / 8, "source", model->source,
		"device_model", "beta", m.beta, "kappa", m.kappa, "eta",
		m.eta[kernel], "decode_fitted_on", m.decode_pool ?
		"every device" : "the device's class", "prefill_kernel",
		calib_kernels[kernel], "prefill_fitted_on", m.eta_from[kernel],
		"predicted", "decode_tokens_per_s", 1 / t_dec,
		"prefill_tokens_per_s", 1 / t_pre,
		"held_out", "decode", band_json(&m.band[0]), "prefill",
		band_json(&m.band[1]),
		"extrapolation", extrapolation(d, pm),
		"datasheet", "threads", d->threads, "peak_gbs", d->peak_gbs,
		"fp32_gflops", d->fp32_gflops, "int8_gops", d->int8_gops,
		"figures", figures_json(&m, d),
		"method", "level: the device model (dfit.h: decode s / max(W / "
		"(beta B), 2 P / (kappa F)), s the slowest thread's share, "
		"prefill eta I / 2 P for the kernel family) fitted on the "
		"library's published llama.cpp CPU figures with the device's own, "
		"at a mean context of 64 (decode) and over 512 tokens (prefill); "
		"shape: the measured profile's context slope (times the model's "
		"KV a position over the measured one's) and fixed prefill part, "
		"scaled alike. held_out: predicted over published tokens/s less "
		"1, the time a token being (1 + error) times the predicted one",
		"measured_provenance",
		json_object_get(measured, "provenance")));
	if (json_object_get(measured, "kernel"))
		json_object_set(json_object_get(out, "derivation"),
				"measured_kernel", json_object_get(measured, "kernel"));
	json_object_set(out, "provenance", (json_t *)prov);
	return out;
}

/* A measured profile read strictly (a bad field is named), then as JSON;
 * NULL with the message. */
static json_t *measured_load(const char *path, struct err *e)
{
	struct prof_edge pe;

	if (prof_edge_load(path, &pe, e) < 0)
		return NULL;
	return jx_load(path, e);
}

json_t *calib_derive_file(const char *profile_path, const char *device,
			  const char *model, const char *kernel,
			  const char *dir, const json_t *prov, struct err *e)
{
	struct calib_device d;
	struct shape s;
	json_t *measured, *derived;
	int k = kernel ? calib_kernel_find(kernel, e) : 0;

	if (k < 0 || (model && shape_load(&s, model, e) < 0))
		return NULL;
	if (!(measured = measured_load(profile_path, e)))
		return NULL;
	if (calib_device_load(&d, device, dir, e) < 0) {
		json_decref(measured);
		return NULL;
	}
	derived = calib_derive(measured, profile_path, &d, model ? &s : NULL,
			       k, dir, prov, e);
	calib_device_release(&d);
	json_decref(measured);
	return derived;
}

/* " (held out LO% to HI%, N figures)" of band b, or " (no held-out
 * figure)" */
static void say_band(const json_t *b, FILE *f)
{
	const json_t *lo = json_object_get(b, "lowest");
	const json_t *hi = json_object_get(b, "highest");
	long long n = json_integer_value(json_object_get(b, "figures"));

	if (json_is_number(lo) && json_is_number(hi))
		fprintf(f, " (held out %+.0f%% to %+.0f%%, %lld figure%s)",
			100 * json_number_value(lo), 100 * json_number_value(hi),
			n, n == 1 ? "" : "s");
	else
		fprintf(f, " (no held-out figure)");
}

/* A rate to three figures, whole from 100 up (77700, not 7.77e+04) */
static void say_rate(FILE *f, const char *what, double v)
{
	fprintf(f, v >= 100 ? "%s %.0f tokens/s" : "%s %.3g tokens/s", what, v);
}

void calib_derive_say(const json_t *derived, FILE *f)
{
	const json_t *d = json_object_get(derived, "derivation");
	const json_t *pr = json_object_get(d, "predicted");
	const json_t *ho = json_object_get(d, "held_out");

	fprintf(f, "calib: %s, %s: ",
		json_string_value(json_object_get(derived, "device")),
		json_string_value(jx_at((json_t *)d, "/model/name")));
	say_rate(f, "decode",
		 json_number_value(json_object_get(pr, "decode_tokens_per_s")));
	say_band(json_object_get(ho, "decode"), f);
	say_rate(f, ", prefill",
		 json_number_value(json_object_get(pr, "prefill_tokens_per_s")));
	say_band(json_object_get(ho, "prefill"), f);
	fprintf(f, "; %s\n", json_string_value(json_object_get(d,
							       "extrapolation")));
}
