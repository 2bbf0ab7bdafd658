/* prof.h: the calibration profiles the simulator reads (written by
 * `hybridspec calib`, format in docs/calib.md).
 *
 * An edge profile holds a device's measured draft time per token against
 * context length and prompt prefill time against prompt length, and the
 * linear fit the simulator uses (cfg_device). An acceptance profile holds
 * alpha, E[A] per gamma and a bit trace of one draft against one target on
 * real text. Both are read strictly: a missing field, a table out of order,
 * a negative time or a model whose shape contradicts its name is an error
 * naming the file and the field. */
#ifndef HS_PROF_H
#define HS_PROF_H

#include <jansson.h>
#include <stdbool.h>

#include "err.h"

/* The held-out bands a derived profile carries (derivation.held_out.NAME,
 * NAME prof_band_names[k]) */
enum prof_band_kind { PROF_BAND_DECODE, PROF_BAND_PREFILL, PROF_NBANDS };

extern const char *const prof_band_names[PROF_NBANDS];

/* One band: the lowest and highest error (predicted over published
 * tokens/s, less 1) of the figures held out, when has */
struct prof_band {
	bool has;
	double lowest, highest;
};

struct prof_edge {
	/* the fit (cfg_device's form) */
	double draft_base_s, draft_per_ctx_s;
	double prefill_base_s, prefill_per_token_s;
	double draft_pair_s; /* optional: a pass feeding two tokens
				(cfg_device's), else 0 */
	int vocab;       /* of the draft model */
	double stream_Bps;  /* the device's measured memory bandwidth */
	double peak_flops;  /* its measured FMA peak */
	bool derived;    /* derived from another device's profile */
	/* the device's power computing and idle, its battery (0: not known,
	 * or none): the profile's optional "power" */
	double power_busy_w, power_idle_w, battery_wh;
	/* a derived profile's held-out error bands, decode and prefill */
	struct prof_band band[PROF_NBANDS];
	char model[64];  /* the draft model's shape name */
	char device[64];
};

int prof_edge_load(const char *path, struct prof_edge *p, struct err *e);
/* The same from a document in memory (borrowed; every field is required,
 * so nothing is added to it), named path in messages. */
int prof_edge_parse(json_t *doc, const char *path, struct prof_edge *p,
		    struct err *e);

struct prof_accept {
	double alpha;          /* greedy agreement along the text */
	char bits[1024];       /* the bit trace, resolved path */
	int max_gamma;         /* E[A] is given for gamma 1 .. max_gamma */
	double mean_accepted[65]; /* [gamma]: tokens committed per block */
	char source[256];      /* "DRAFT against TARGET on TEXT", as the
				  profile names them ("" for each it lacks) */
	char target[64];       /* the target's and the draft's model names */
	char draft[64];        /* without their formats (what follows ':'),
				  or "" */
};

int prof_accept_load(const char *path, struct prof_accept *p, struct err *e);

/* A published acceptance figure (results/calib/acceptance/NAME.json,
 * docs/calib.md): a pair's alpha as a paper or a thread gave it, or as
 * solved from what it gave. */
struct prof_published {
	double alpha;
	char name[64];
	char source[320];  /* "NAME: DRAFT against TARGET, SOURCE" */
	char target[64];   /* the shapes hybridspec knows it measured, else */
	char draft[64];    /* the figure's own names, for the pair check */
};

/* The library of published figures: $HYBRIDSPEC_ACCEPTANCE, else
 * results/calib/acceptance (fs_repo_dir). Borrowed. */
const char *prof_published_dir(void);
/* The figure called name in the library, read strictly; an unknown name
 * lists the known ones. 0, or -1 with the message. */
int prof_published_load(const char *name, struct prof_published *p,
			struct err *e);

/* Whether doc, read from file, is a file of the kind want ("edge",
 * "acceptance", "verify"): 0 when it is or says no kind (the strict reading
 * that follows reports what is wrong); else -1 with "FILE: an acceptance
 * profile, where an edge profile was expected". */
int prof_kind_check(const char *file, const json_t *doc, const char *want,
		    struct err *e);

#endif
