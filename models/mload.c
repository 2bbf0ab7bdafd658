/* mload.c: model lookup, formats by name, tokenizers beside the weights. */
#include "mload.h"

#include "rng.h"
#include "spec.h"
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int quant_parse(const char *s, struct quant *q, struct err *e)
{
	char buf[64];
	char *tok, *save;

	*q = (struct quant){ LIN_W4A16, 128, Q4_SYM, false };
	if (strlen(s) >= sizeof(buf))
		goto bad;
	strcpy(buf, s);
	tok = strtok_r(buf, "-", &save);
	if (!tok)
		goto bad;
	if (!strcmp(tok, "f32") || !strcmp(tok, "fp32"))
		q->format = LIN_F32;
	else if (!strcmp(tok, "f16") || !strcmp(tok, "fp16"))
		q->format = LIN_F16;
	else if (!strcmp(tok, "w8a16"))
		q->format = LIN_W8A16;
	else if (!strcmp(tok, "w4a16"))
		q->format = LIN_W4A16;
	else if (!strcmp(tok, "w4a4"))
		q->format = LIN_W4A4;
	else
		goto bad;
	while ((tok = strtok_r(NULL, "-", &save))) {
		if (q->format != LIN_W4A16 && q->format != LIN_W4A4)
			goto bad;
		if (!strcmp(tok, "g32") || !strcmp(tok, "g64") || !strcmp(tok, "g128"))
			q->group = atoi(tok + 1);
		else if (!strcmp(tok, "sym"))
			q->kind = Q4_SYM;
		else if (!strcmp(tok, "asym"))
			q->kind = Q4_ASYM;
		else if (!strcmp(tok, "gptq"))
			q->gptq = true;
		else
			goto bad;
	}
	return 0;
bad:
	return err_set(e, "--quant '%s': expected f32, f16, w8a16, "
		       "w4a16[-g32|-g64|-g128][-sym|-asym][-gptq] or "
		       "w4a4[-gG][-sym|-asym][-gptq]",
		       s);
}

const char *quant_name(const struct quant *q, char *buf)
{
	static const char *const base[] = { "f32", "f16", "w8a16", "w4a16",
					    "w4a4" };

	if (q->format == LIN_W4A16 || q->format == LIN_W4A4)
		snprintf(buf, 32, "%s-g%d-%s%s", base[q->format], q->group,
			 q->kind == Q4_SYM ? "sym" : "asym", q->gptq ? "-gptq" : "");
	else
		snprintf(buf, 32, "%s", base[q->format]);
	return buf;
}

static int is_file(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *mload_models_dir(void)
{
	const char *env = getenv("HYBRIDSPEC_MODELS");

	if (env && is_dir(env))
		return env;
	return is_dir("../shared/models") ? "../shared/models" : NULL;
}

const char *mload_data_dir(void)
{
	const char *env = getenv("HYBRIDSPEC_DATA");

	return env && is_dir(env) ? env : "../shared/data";
}

/* GPTQ on calibration tokens sampled from the FP32 model itself. */
static void gptq_self_calibrated(struct llama *m, const struct quant *q)
{
	const int stories = 8, len = m->c.seq_len < 256 ? m->c.seq_len : 256;
	int *calib = xmalloc(sizeof(int) * (size_t)stories * len), n = 0;
	gsl_rng *r = rng_new(2026, rng_stream_id("gptq/calibration"));
	double *p = xmalloc(sizeof(double) * m->c.vocab);
	float *lg = xmalloc(sizeof(float) * m->c.vocab);
	struct llama_state s;

	llama_state_init(&s, &m->c, 1);
	for (int st = 0; st < stories; st++) {
		int tok = TOK_BOS;

		for (int pos = 0; pos < len; pos++) {
			calib[n++] = tok;
			llama_forward(m, &s, &tok, 1, pos, lg);
			spec_softmax(lg, m->c.vocab, 1.0f, p);
			tok = spec_sample(p, m->c.vocab, r);
			if (tok == TOK_BOS || tok == TOK_EOS)
				break;
		}
	}
	llama_state_release(&s);
	llama_quantize_gptq(m, q->format, q->group, q->kind, calib, n);
	free(calib);
	free(p);
	free(lg);
	rng_free(r);
}

int mload(const char *name_or_path, const struct quant *q, struct llama *m,
	  struct tok *t, struct err *e)
{
	char path[2048], dir[2048], tp[2200];
	const char *slash;
	int hf;

	if (is_file(name_or_path) || is_dir(name_or_path)) {
		snprintf(path, sizeof(path), "%s", name_or_path);
	} else {
		const char *md = mload_models_dir();

		if (!md)
			return err_set(e, "model '%s': not a file, and no models "
				       "folder ($HYBRIDSPEC_MODELS or "
				       "../shared/models)", name_or_path);
		snprintf(path, sizeof(path), "%s/%s/%s.bin", md, name_or_path,
			 name_or_path);
		if (!is_file(path))
			snprintf(path, sizeof(path), "%s/%s", md, name_or_path);
		if (!is_file(path) && !is_dir(path))
			return err_set(e, "model '%s': no '%s/%s/%s.bin' and no "
				       "folder '%s'", name_or_path, md, name_or_path,
				       name_or_path, path);
	}
	hf = is_dir(path);
	if (hf) {
		snprintf(dir, sizeof(dir), "%s", path);
		if (llama_load_hf(m, dir, e) < 0)
			return -1;
		snprintf(tp, sizeof(tp), "%s/tokenizer.json", dir);
		if (tok_load_hf(t, tp, m->c.vocab, e) < 0) {
			llama_release(m);
			return -1;
		}
	} else {
		if (llama_load_llama2c(m, path, e) < 0)
			return -1;
		slash = strrchr(path, '/');
		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1,
			 slash ? path : ".");
		snprintf(tp, sizeof(tp), "%s/tok%d.bin", dir, m->c.vocab);
		if (!is_file(tp))
			snprintf(tp, sizeof(tp), "%s/tokenizer.bin", dir);
		if (tok_load_llama2c(t, tp, m->c.vocab, e) < 0) {
			llama_release(m);
			return -1;
		}
	}
	if (q->gptq)
		gptq_self_calibrated(m, q);
	else
		llama_convert(m, q->format, q->group, q->kind);
	return 0;
}

int mload_spec(const char *arg, const char *def_quant, struct llama *m,
	       struct tok *t, struct quant *q, struct err *e)
{
	char name[1024];
	const char *colon = strrchr(arg, ':');

	snprintf(name, sizeof(name), "%.*s", colon ? (int)(colon - arg) : 1023,
		 arg);
	if (quant_parse(colon ? colon + 1 : def_quant, q, e) < 0)
		return -1;
	return mload(name, q, m, t, e);
}
