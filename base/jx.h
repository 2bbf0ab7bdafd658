/* jx.h: strict reading of JSON documents (configs, profiles, sweeps).
 *
 * Every reader names the value it checks by file and JSON pointer, says what
 * it expected and what it found:
 *   configs/x.json: /tenants/0/wan/rtt_s: expected a number > 0, got "fast"
 * An object's keys are checked against the list its reader knows (jx_object),
 * so a typo is an error, never a silent default. A reader given a default
 * writes it into the document when the key is absent: the document then is
 * the resolved config, defaults filled in. */
#ifndef HS_JX_H
#define HS_JX_H

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define JX_PTR_MAX 256

struct jx {
	const char *file; /* borrowed: the document's name in messages */
	struct err *err;  /* borrowed: receives the error */
};

struct jx_range {
	double lo, hi;
	bool lo_open, hi_open;
};

#define JX_ANY ((struct jx_range){ -INFINITY, INFINITY, false, false })
#define JX_POS ((struct jx_range){ 0, INFINITY, true, false })
#define JX_NONNEG ((struct jx_range){ 0, INFINITY, false, false })
#define JX_UNIT ((struct jx_range){ 0, 1, false, false })

/* Defaults: JX_REQUIRED for numbers, JX_REQUIRED_INT for integers, NULL for
 * strings mean the key must be present. */
#define JX_REQUIRED NAN
#define JX_REQUIRED_INT LLONG_MIN

/* Parses the file at path. Returns a new reference (caller decrefs), or NULL
 * with "path: cannot read: ..." or "path:LINE:COL: invalid JSON: ...". */
json_t *jx_load(const char *path, struct err *e);

/* Writes ptr + "/" + key (escaped as RFC 6901 asks) or ptr + "/" + i into
 * buf (JX_PTR_MAX bytes) and returns buf. */
char *jx_child(char *buf, const char *ptr, const char *key);
char *jx_index(char *buf, const char *ptr, size_t i);

/* 0 where arr (at ptr), a list of choices, names no value twice (numbers
 * by value, 4 as 4.0; the rest by json_equal), else x's error at the
 * repeat: "expected a value not listed before" */
int jx_unique(struct jx *x, const json_t *arr, const char *ptr);

/* The value at ptr (RFC 6901) in root, borrowed, or NULL. */
json_t *jx_at(json_t *root, const char *ptr);

/* Reports "file: ptr: expected <expected>, got <got>" (got NULL: missing). */
int jx_fail(struct jx *x, const char *ptr, const char *expected,
	    const json_t *got);

/* Checks that v is an object whose keys are all in keys (NULL-terminated). */
int jx_object(struct jx *x, const json_t *v, const char *ptr,
	      const char *const keys[]);

/* Readers of obj[key], obj at ptr. Each returns 0, or -1 with the message.
 * Strings come back borrowed from the document. A default is written into
 * obj, and jx_int writes a whole number given as 1e2 back as 100. */
int jx_num(struct jx *x, json_t *obj, const char *ptr, const char *key,
	   struct jx_range r, double def, double *out);
int jx_int(struct jx *x, json_t *obj, const char *ptr, const char *key,
	   long long lo, long long hi, long long def, long long *out);
int jx_bool(struct jx *x, json_t *obj, const char *ptr, const char *key,
	    int def, bool *out); /* def: 0, 1, or -1 for required */
int jx_str(struct jx *x, json_t *obj, const char *ptr, const char *key,
	   const char *def, const char **out);
int jx_enum(struct jx *x, json_t *obj, const char *ptr, const char *key,
	    const char *const names[], const char *def, int *out);

/* obj[key] as a non-empty array of numbers in r, strictly increasing when
 * order > 0, non-decreasing when order == 0, any order when order < 0.
 * *out (n) is malloc'd; the caller frees it (also NULL on error). */
int jx_nums(struct jx *x, json_t *obj, const char *ptr, const char *key,
	    struct jx_range r, int order, double **out, size_t *n);

/* The range as words: "> 0", ">= 1", "in [0, 1]". buf has 64 bytes. */
const char *jx_range_str(char *buf, struct jx_range r);
bool jx_in_range(double v, struct jx_range r);

/* Resolves path (as written in the document) against the document's
 * folder: absolute paths stay, relative ones are joined to it and made
 * absolute (so that a resolved document reads the same files from
 * anywhere). Returns buf. */
char *jx_path(const struct jx *x, const char *path, char *buf, size_t n);

/* Sets the value at ptr in root to value_text, read as JSON (a bare word
 * that is not JSON is taken as a string). Missing objects on the way are
 * created; array indices must exist, except that the last one may be the
 * array's length or "-" to append. For "--set /a/b=3". where (JX_PTR_MAX
 * bytes, or NULL) gets the pointer of what was set: ptr, its "-" the
 * index appended at. */
int jx_set(json_t *root, const char *ptr, const char *value_text,
	   char *where, struct err *e);

/* Dumps v the way every project file is written (indented, 15 significant
 * digits, keys in document order, a final newline). Caller frees. */
char *jx_dumps(const json_t *v);
/* The same with every number reading back to the same double (a resolved
 * config reruns its run exactly), each in the fewest digits that do: 0.1,
 * not 0.10000000000000001 */
char *jx_dumps_exact(const json_t *v);

/* Writes jx_dumps(v) to path through a temporary file in the same folder
 * and a rename, so that path is never half-written. */
int jx_save(const char *path, const json_t *v, struct err *e);
/* Whether path may be replaced by what a command writes: its folder can
 * take it (fs_writable), and it is absent or empty, or (where replace) a
 * command wrote it: JSON whose provenance names a hybridspec command, or
 * holding every member of keys (NULL-terminated; NULL: none), or text that
 * begins with line (NULL: none); never a symbolic link. 0, or -1 with e
 * saying why it refuses (a file of hybridspec's without replace: "add
 * --overwrite"). */
int jx_replaceable(const char *path, const char *const *keys,
		   const char *line, bool replace, struct err *e);

#endif
