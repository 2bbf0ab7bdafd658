/* mload.h: finding and loading a model by name or path, with a weight
 * format given as text ("f32", "f16", "w8a16", "w4a16-g128-sym", "w4a4",
 * ...), and its tokenizer. */
#ifndef HS_MLOAD_H
#define HS_MLOAD_H

#include "llama.h"
#include "tok.h"

struct quant {
	enum lin_format format;
	int group;         /* W4: 32, 64, 128 */
	enum q4_kind kind; /* W4: sym or asym */
	bool gptq;         /* W4: GPTQ-style instead of round to nearest */
	bool head;         /* the embeddings and classifier quantised too
			      (round to nearest); else kept in the loaded
			      precision, the GPTQ/AWQ convention */
};

/* Parses "f32" | "f16[-head]" | "w8a16[-head]" |
 * "w4a16[-g32|-g64|-g128][-sym|-asym][-gptq][-head]" |
 * "w4a4[-gG][-sym|-asym][-gptq][-head]" (defaults g128, sym, round to
 * nearest, embeddings and classifier kept in FP32). GPTQ calibrates on the FP32
 * model's own samples (8 stories of up to 256 tokens from the start token,
 * temperature 1, a fixed seed), so no evaluation text leaks into it. */
int mload_quant_parse(const char *s, struct quant *q, struct err *e);
/* The canonical text of q into buf (32 bytes). */
const char *mload_quant_name(const struct quant *q, char *buf);

/* The path of model name: name itself if it is a file or folder, else
 * the first of NAME/NAME.bin (llama2.c), NAME/ with a config.json (Hugging
 * Face) or NAME/ with exactly one .gguf file, in $HYBRIDSPEC_MODELS, then
 * ../shared/models, then ${XDG_CACHE_HOME:-~/.cache}/hybridspec/models
 * (where scripts/fetch-models.sh puts what it fetches). 0, or -1. */
int mload_find(const char *name, char *path, size_t cap);

/* Resolves a model (mload_find): a llama2.c file, a GGUF file or a
 * Hugging Face folder. Loads it, converts it to q (on every online CPU:
 * the same bytes at any count), and loads its tokenizer (tok<vocab>.bin or
 * tokenizer.bin beside a llama2.c file; tokenizer.json in a folder; a
 * GGUF file's own). */
int mload(const char *name_or_path, const struct quant *q, struct llama *m,
	  struct tok *t, struct err *e);

/* mload of "NAME[:QUANT]", QUANT def_quant when absent; *q gets it. */
int mload_spec(const char *arg, const char *def_quant, struct llama *m,
	       struct tok *t, struct quant *q, struct err *e);
/* Such a spec split: NAME into name (n bytes), *quant its QUANT or
 * def_quant (borrowed from spec or def_quant). 0, or -1 with e's message
 * where NAME does not fit. */
int mload_spec_split(const char *spec, const char *def_quant, char *name,
		     size_t n, const char **quant, struct err *e);

/* The first models folder that exists (of the three mload_find searches),
 * or NULL. Borrowed. */
const char *mload_models_dir(void);
/* The evaluation texts: $HYBRIDSPEC_DATA, else ../shared/data. Borrowed. */
const char *mload_data_dir(void);
/* The text called name in mload_data_dir() into buf (n bytes): buf, or
 * NULL with e naming the folder, where to set it, and --text, when it is
 * not there. */
const char *mload_data_file(const char *name, char *buf, size_t n,
			    struct err *e);

#endif
