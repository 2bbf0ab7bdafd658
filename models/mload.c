/* mload.c: model lookup, formats by name, tokenizers beside the weights.
 *
 * A weight format's name reads back to the same struct quant
 * (mload_quant_parse of mload_quant_name); a model is found by path, or
 * by name in the model folders in order ($HYBRIDSPEC_MODELS, the shared
 * models, the cache), the first that holds it winning. A loaded model's
 * layers are all in the one format asked for (its embeddings and
 * classifier too with -head). */
#include "mload.h"

#include "gload.h"
#include "gptq.h"
#include "hf.h"

#include "rng.h"
#include "spec.h"
#include "fs.h"
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

int mload_quant_parse(const char *s, struct quant *q, struct err *e)
{
	char buf[64], want[512];
	char *tok, *save;
	size_t at = 0;

	*q = (struct quant){ LIN_W4A16, 128, Q4_SYM, false, false };
	if (strlen(s) >= sizeof(buf))
		goto bad;
	strcpy(buf, s);
	tok = strtok_r(buf, "-", &save);
	if (!tok || lin_format_find(tok, &q->format))
		goto bad;
	while ((tok = strtok_r(NULL, "-", &save))) {
		if (!strcmp(tok, "head") && q->format != LIN_F32 && !q->head) {
			q->head = true;
			continue;
		}
		if (!lin_formats[q->format].grouped)
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
	for (int f = 0; f < LIN_NFORMATS; f++)
		at += (size_t)snprintf(want + at, sizeof(want) - at, "%s%s%s%s",
				       f ? ", " : "", lin_formats[f].name,
				       lin_formats[f].grouped ?
					       "[-g32|-g64|-g128][-sym|-asym]"
					       "[-gptq]" : "",
				       f != LIN_F32 ? "[-head]" : "");
	return err_set(e, "expected a weight format: %s; got \"%s\"", want, s);
}

const char *mload_quant_name(const struct quant *q, char *buf)
{
	const char *base = lin_formats[q->format].name;

	if (lin_formats[q->format].grouped)
		snprintf(buf, 32, "%s-g%d-%s%s%s", base, q->group,
			 q->kind == Q4_SYM ? "sym" : "asym", q->gptq ? "-gptq" : "",
			 q->head ? "-head" : "");
	else
		snprintf(buf, 32, "%s%s", base, q->head ? "-head" : "");
	return buf;
}

static int is_file(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The models folders, in the order they are searched: $HYBRIDSPEC_MODELS,
 * ../shared/models, then the cache scripts/fetch-models.sh fills. */
static int models_dirs(const char **dirs)
{
	static char cache[2048];
	const char *env = getenv("HYBRIDSPEC_MODELS"), *xdg, *home;
	int n = 0;

	if (env && fs_is_dir(env))
		dirs[n++] = env;
	if (fs_is_dir("../shared/models"))
		dirs[n++] = "../shared/models";
	xdg = getenv("XDG_CACHE_HOME");
	home = getenv("HOME");
	if (xdg && *xdg)
		snprintf(cache, sizeof(cache), "%s/hybridspec/models", xdg);
	else
		snprintf(cache, sizeof(cache), "%s/.cache/hybridspec/models",
			 home ? home : ".");
	if (fs_is_dir(cache))
		dirs[n++] = cache;
	return n;
}

const char *mload_models_dir(void)
{
	const char *dirs[3];

	return models_dirs(dirs) ? dirs[0] : NULL;
}

/* Whether folder dir, whose last component is base, holds a model: base.bin
 * (a llama2.c checkpoint), a Hugging Face config.json (path: the folder),
 * or one .gguf file; its path into path. */
static bool model_in(const char *dir, const char *base, char *path, size_t cap)
{
	DIR *d;
	struct dirent *de;
	int found = 0;

	snprintf(path, cap, "%s/%s.bin", dir, base);
	if (is_file(path))
		return true;
	snprintf(path, cap, "%s/config.json", dir);
	if (is_file(path)) {
		snprintf(path, cap, "%s", dir);
		return true;
	}
	if (!(d = opendir(dir)))
		return false;
	while ((de = readdir(d))) { /* the folder's one .gguf file */
		size_t n = strlen(de->d_name);

		if (n > 5 && !strcmp(de->d_name + n - 5, ".gguf")) {
			snprintf(path, cap, "%s/%s", dir, de->d_name);
			found++;
		}
	}
	closedir(d);
	return found == 1;
}

int mload_find(const char *name, char *path, size_t cap)
{
	const char *dirs[3];
	int nd = models_dirs(dirs);

	if (is_file(name)) {
		snprintf(path, cap, "%s", name);
		return 0;
	}
	if (fs_is_dir(name)) { /* a model's folder, given by its path */
		char dir[2048];
		const char *base;
		size_t n;

		snprintf(dir, sizeof(dir), "%s", name);
		while ((n = strlen(dir)) > 1 && dir[n - 1] == '/')
			dir[n - 1] = '\0';
		base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
		return model_in(dir, base, path, cap) ? 0 : -1;
	}
	for (int i = 0; i < nd; i++) {
		char dir[2048];

		snprintf(dir, sizeof(dir), "%s/%s", dirs[i], name);
		if (fs_is_dir(dir) && model_in(dir, name, path, cap))
			return 0;
	}
	return -1;
}

const char *mload_data_dir(void)
{
	const char *env = getenv("HYBRIDSPEC_DATA");

	return env && fs_is_dir(env) ? env : "../shared/data";
}

const char *mload_data_file(const char *name, char *buf, size_t n,
			    struct err *e)
{
	snprintf(buf, n, "%s/%s", mload_data_dir(), name);
	if (is_file(buf))
		return buf;
	err_set(e, "%s: not there: the evaluation texts are found in "
		"$HYBRIDSPEC_DATA, else ../shared/data; give the folder that "
		"holds %s there, or a text with --text", buf, name);
	return NULL;
}

/* GPTQ on calibration tokens sampled from the FP32 model itself. */
static void gptq_self_calibrated(struct llama *m, const struct tok *t,
				 const struct quant *q)
{
	const int stories = 8, len = m->c.seq_len < 256 ? m->c.seq_len : 256;
	int *calib = xmalloc(sizeof(int) * (size_t)stories * len), n = 0;
	gsl_rng *r = rng_new(2026, rng_stream_id("gptq/calibration"));
	double *p = xmalloc(sizeof(double) * m->c.vocab);
	float *lg = xmalloc(sizeof(float) * m->c.vocab);
	struct llama_state s;

	llama_state_init(&s, &m->c, 1);
	for (int st = 0; st < stories; st++) {
		int tok = t->bos;

		for (int pos = 0; pos < len; pos++) {
			calib[n++] = tok;
			llama_forward(m, &s, &tok, 1, pos, lg);
			spec_softmax(lg, m->c.vocab, 1.0f, p);
			tok = spec_sample(p, m->c.vocab, r);
			if (tok == t->bos || tok == t->eos)
				break;
		}
	}
	llama_state_release(&s);
	gptq_quantize(m, q->format, q->group, q->kind, calib, n);
	free(calib);
	free(p);
	free(lg);
	rng_free(r);
}

static int is_gguf(const char *path)
{
	FILE *f = fopen(path, "rb");
	char magic[4] = { 0 };
	int yes;

	if (!f)
		return 0;
	yes = fread(magic, 1, 4, f) == 4 && !memcmp(magic, "GGUF", 4);
	fclose(f);
	return yes;
}

/* The embeddings (and, tied or not, the classifier) through the draft's
 * quantiser: rows rounded to the format's grid and back to FP32, so that
 * the lookup stays a table but holds the draft's values. */
static void quantize_embeddings(struct llama *m, const struct quant *q,
				struct kpool *p)
{
	struct linear l;

	lin_init_f32(&l, m->tok_emb, m->c.vocab, m->c.dim);
	lin_convert(&l, q->format, q->group, q->kind, m->kn, p);
	m->tok_emb = lin_weights(&l);
	lin_release(&l);
	lin_convert(&m->cls, q->format, q->group, q->kind, m->kn, p);
}

int mload(const char *name_or_path, const struct quant *q, struct llama *m,
	  struct tok *t, struct err *e)
{
	char path[2048], dir[2048], tp[2200];
	const char *slash;
	struct kpool *p;

	if (mload_find(name_or_path, path, sizeof(path)) < 0) {
		if (fs_is_dir(name_or_path))
			return err_set(e, "model '%s': a folder without NAME.bin "
				       "(NAME the folder's), config.json or one "
				       ".gguf file (holding several: name one)",
				       name_or_path);
		if (!mload_models_dir())
			return err_set(e, "model '%s': not a file, and no models "
				       "folder ($HYBRIDSPEC_MODELS, ../shared/models "
				       "or ~/.cache/hybridspec/models)", name_or_path);
		return err_set(e, "model '%s': not a file, and no '%s/NAME.bin', "
			       "folder with config.json or one .gguf file under "
			       "'%s' in the models folders ($HYBRIDSPEC_MODELS, "
			       "../shared/models, ~/.cache/hybridspec/models; "
			       "scripts/fetch-models.sh gets smollm2-135m, "
			       "stories260K and tinystories656K)",
			       name_or_path, name_or_path, name_or_path);
	}
	if (fs_is_dir(path)) {
		snprintf(dir, sizeof(dir), "%s", path);
		if (hf_load(m, dir, e) < 0)
			return -1;
		snprintf(tp, sizeof(tp), "%s/tokenizer.json", dir);
		if (tok_load_hf(t, tp, m->c.vocab, e) < 0) {
			llama_release(m);
			return -1;
		}
	} else if (is_gguf(path)) {
		if (llama_load_gguf(m, t, path, e) < 0)
			return -1;
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
	/* the conversion on every CPU (its bytes the same at any count) */
	p = kern_pool_new(kpool_cpus());
	if (q->gptq)
		gptq_self_calibrated(m, t, q);
	else
		llama_convert(m, q->format, q->group, q->kind, p);
	if (q->head && q->format != LIN_F32)
		quantize_embeddings(m, q, p);
	kpool_free(p);
	return 0;
}

int mload_spec_split(const char *spec, const char *def_quant, char *name,
		     size_t n, const char **quant, struct err *e)
{
	const char *colon = strrchr(spec, ':');
	size_t len = colon ? (size_t)(colon - spec) : strlen(spec);

	if (len >= n)
		return err_set(e, "'%.60s...': expected a model name or path of "
			       "fewer than %zu bytes", spec, n);
	snprintf(name, n, "%.*s", (int)len, spec);
	*quant = colon ? colon + 1 : def_quant;
	return 0;
}

int mload_spec(const char *arg, const char *def_quant, struct llama *m,
	       struct tok *t, struct quant *q, struct err *e)
{
	char name[1024];
	const char *quant;

	if (mload_spec_split(arg, def_quant, name, sizeof(name), &quant, e) < 0)
		return -1;
	if (mload_quant_parse(quant, q, e) < 0)
		return err_prefix(e, "%s", arg);
	return mload(name, q, m, t, e);
}
