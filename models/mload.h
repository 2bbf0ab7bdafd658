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
};

/* Parses "f32" | "f16" | "w8a16" |
 * "w4a16[-g32|-g64|-g128][-sym|-asym][-gptq]" | "w4a4[-gG][-sym|-asym][-gptq]"
 * (defaults g128, sym, round to nearest). GPTQ calibrates on the FP32
 * model's own samples (8 stories of up to 256 tokens from the start token,
 * temperature 1, a fixed seed), so no evaluation text leaks into it. */
int quant_parse(const char *s, struct quant *q, struct err *e);
/* The canonical text of q into buf (32 bytes). */
const char *quant_name(const struct quant *q, char *buf);

/* Resolves a model: a llama2.c file or a Hugging Face folder, by path, or
 * by name in $HYBRIDSPEC_MODELS then ../shared/models (NAME/NAME.bin, else
 * the folder NAME/). Loads it, converts it to q, and loads its tokenizer
 * (tok<vocab>.bin or tokenizer.bin beside a llama2.c file;
 * tokenizer.json in a folder). */
int mload(const char *name_or_path, const struct quant *q, struct llama *m,
	  struct tok *t, struct err *e);

/* mload of "NAME[:QUANT]", QUANT def_quant when absent; *q gets it. */
int mload_spec(const char *arg, const char *def_quant, struct llama *m,
	       struct tok *t, struct quant *q, struct err *e);

/* The models folder in use ($HYBRIDSPEC_MODELS, else ../shared/models), or
 * NULL if neither exists. Borrowed. */
const char *mload_models_dir(void);
/* The evaluation texts: $HYBRIDSPEC_DATA, else ../shared/data. Borrowed. */
const char *mload_data_dir(void);

#endif
