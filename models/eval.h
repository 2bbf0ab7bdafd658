/* eval.h: real models run over real text, as the generate and eval
 * commands show them: text generated after a prompt, the perplexity of a
 * text, and a draft's acceptance against its target (teacher-forced along
 * the text, then real speculative decoding) with the profile the
 * simulator replays (docs/calib.md). Models are found by name or path
 * (mload.h); each input that cannot be had (a model, a text, a file to
 * write) is e's message. */
#ifndef HS_EVAL_H
#define HS_EVAL_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "mload.h"
#include "spec.h"

/* Text from a model after a prompt. */
struct eval_gen {
	const char *model;   /* borrowed: a name or path (mload_find) */
	struct quant q;      /* its weights' format */
	const char *prompt;  /* borrowed: "" for none */
	long long steps;     /* the sequence's most tokens, prompt included
				(at most the model's context) */
	double temperature;  /* 0: greedy, else sampled at it */
	uint64_t seed;       /* of the samples' stream ("generate") */
	const struct kern *kern; /* borrowed: the kernel set; NULL: the best
				    this CPU runs (kern_best) */
};

/* Writes the prompt's text, then each new token's as it comes (flushed),
 * then a newline, to out; stops at a start or end token or after
 * o->steps. Without a prompt or a start token it begins from the start
 * token. 0, or -1 with e's message (the model). */
int eval_generate(const struct eval_gen *o, FILE *out, struct err *e);

/* Perplexity of a model over a text. */
struct eval_ppl_opts {
	const char *model;   /* borrowed: a name or path */
	struct quant q;
	const char *text;    /* borrowed: the text's file (tok_encode_file) */
	int window;          /* tokens a window (spec_window: 0, the context) */
	long long windows;   /* only the first this many; 0: all */
	int score_from;      /* predictions after this position of a window
				(spec_perplexity), less than the window - 1 */
	int threads;         /* the linear layers' */
	bool int8;           /* W4A16 layers quantise a window's activations
				to int8 a group (the kernels' integer path) */
	const struct kern *kern; /* as eval_gen's */
};

struct eval_ppl {
	double ppl;
	long count;          /* predictions scored */
	int window;          /* the window in use */
	const char *acts;    /* static: llama_block_acts of the model */
	const char *int8_lost; /* static: why int8 was asked for and not had,
				  or NULL */
};

/* 0 with out filled, or -1 with e's message. */
int eval_ppl(const struct eval_ppl_opts *o, struct eval_ppl *out,
	     struct err *e);

enum { EVAL_GAMMA_MAX = 16 }; /* the longest block eval_accept decodes */

/* A draft's acceptance against its target. */
struct eval_accept_opts {
	const char *target;  /* borrowed: NAME[:Q], f32 unless Q */
	const char *draft;   /* borrowed: NAME[:Q], w4a16 unless Q */
	const char *text;    /* borrowed: as eval_ppl_opts's */
	int window;
	long long windows;
	int threads;
	int gamma;           /* decoding with blocks of 1 .. gamma (at most
				EVAL_GAMMA_MAX); 0: the teacher-forced
				measures alone */
	int prompts;         /* cut from the text, 32 tokens each; 128 new
				tokens from each */
	double temperature;  /* 0: greedy verification, else rejection
				sampling at it */
	uint64_t seed;       /* of the samples' stream ("eval/accept") */
	const struct kern *kern; /* both models', as eval_gen's */
};

struct eval_accept {
	char target_quant[32], draft_quant[32]; /* mload_quant_name of each */
	int window;               /* the window in use */
	struct spec_accept a;     /* teacher-forced; a.bits owned */
	struct spec_burst burst;  /* of a.bits */
	int gammas;               /* blocks decoded: 1 .. gammas (<= gamma:
				     the context may end them first) */
	/* tokens committed per verification of a whole block of gamma =
	 * i + 1 (the last block of a run, cut short, left out); NaN when no
	 * block was whole */
	double per_gamma[EVAL_GAMMA_MAX];
};

/* Loads both models, measures, and releases them: 0 with out filled
 * (release it with eval_accept_release), or -1 with e's message and
 * nothing held. */
int eval_accept(const struct eval_accept_opts *o, struct eval_accept *out,
		struct err *e);
void eval_accept_release(struct eval_accept *r);

/* The summary (caller frees): {"kind": "acceptance", "target", "draft",
 * "target_quant", "text", "tokens", "ppl", "ppl_draft", "alpha_greedy",
 * "alpha_stochastic", "temperature", "mean_accepted_per_gamma": {"1": ...,
 * a key a finite per_gamma}, "window", "burst": {"p_accept_after_accept",
 * "p_accept_after_reject", "mean_accept_run", "iid_mean_accept_run" (each
 * null where not known: no reject, no accept), "accept_runs"},
 * "draft_quant"}. */
json_t *eval_accept_json(const struct eval_accept_opts *o,
			 const struct eval_accept *r);

/* Whether eval_accept_save may write path and its bits file (each
 * absent, or, where replace, one a command wrote, in a writable folder):
 * 0, or -1 with e's message. Asked before the measurement, which takes
 * minutes. */
int eval_accept_writable(const char *path, bool replace, struct err *e);

/* Writes the profile (replace as eval_accept_writable's): path minus
 * ".json" plus ".bits" (r's bits, 64 a line) and then summary to path,
 * each whole or not at all; first adds
 * to summary "bits" (the bits file's name, relative to the profile) and
 * "provenance" (prov, borrowed). 0, or -1 with e's message. */
int eval_accept_save(const struct eval_accept *r, json_t *summary,
		     const char *path, bool replace, json_t *prov,
		     struct err *e);

#endif
