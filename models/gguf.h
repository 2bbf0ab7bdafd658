/* gguf.h: a GGUF file (ggml's model format, versions 2 and 3): its
 * metadata, its tensor infos and its tensors' data, read strictly.
 *
 * The file is a header ("GGUF", version, tensor count, metadata count),
 * the metadata (key, type, value; arrays of any type, nested too), the
 * tensor infos (name, dimensions ne[0..n) with ne[0] the contiguous one,
 * type, offset), then padding to `general.alignment` (default 32) and the
 * data, each tensor at its offset from there. Everything little-endian.
 * Parsing checks every length and offset against the file: a truncated
 * file, a tensor outside the data or overlapping another, an unknown type,
 * a duplicate key or name is an error naming the file and the item. */
#ifndef HS_GGUF_H
#define HS_GGUF_H

#include <stdint.h>
#include <stddef.h>

#include "err.h"
#include "ggq.h"

enum gguf_vtype {
	GGUF_U8, GGUF_I8, GGUF_U16, GGUF_I16, GGUF_U32, GGUF_I32, GGUF_F32,
	GGUF_BOOL, GGUF_STRING, GGUF_ARRAY, GGUF_U64, GGUF_I64, GGUF_F64,
};

/* A string in the file image: not NUL-terminated. Borrowed. */
struct gguf_str {
	const char *s;
	size_t n;
};

/* A NUL-terminated copy of s (a NUL inside it ends the copy early).
 * Caller frees. */
char *gguf_str_dup(const struct gguf_str *s);

struct gguf_kv {
	char *key;             /* owned, NUL-terminated */
	enum gguf_vtype type;
	enum gguf_vtype atype; /* GGUF_ARRAY: the elements' type */
	uint64_t n;            /* GGUF_ARRAY: elements; else 1 */
	const uint8_t *data;   /* borrowed: the value (or the first element) in
				  the image */
	struct gguf_str *str;  /* (n) owned: for a string or an array of them */
};

struct gguf_tensor {
	char *name;            /* owned */
	int n_dims;            /* 1..4 */
	int64_t ne[4];         /* ne[0] contiguous; 1 past n_dims */
	const struct ggq_info *type; /* borrowed, static */
	size_t bytes;
	const uint8_t *data;   /* borrowed: in the image */
};

struct gguf {
	char *name;            /* owned: the path, for messages */
	const uint8_t *image;  /* the whole file */
	size_t size;
	void *map;             /* gguf_open's mapping, else NULL */
	uint32_t version, alignment;
	struct gguf_kv *kv;    /* (n_kv) owned */
	long n_kv;
	struct gguf_tensor *t; /* (n_t) owned, in file order */
	long n_t;
};

/* Maps the file read-only and parses it. */
int gguf_open(struct gguf *g, const char *path, struct err *e);
/* Parses image[0..size) (borrowed: it must outlive g); name is for
 * messages. */
int gguf_parse(struct gguf *g, const uint8_t *image, size_t size,
	       const char *name, struct err *e);
void gguf_release(struct gguf *g);

/* The metadata value of key, or NULL. Borrowed. */
const struct gguf_kv *gguf_get(const struct gguf *g, const char *key);

/* Typed reads of a metadata value; an absent key or a value of another
 * kind is an error naming the file, the key and what was found. An
 * integer may be of any integer type; a float F32 or F64. */
int gguf_int(const struct gguf *g, const char *key, int64_t *v,
	     struct err *e);
int gguf_float(const struct gguf *g, const char *key, double *v,
	       struct err *e);
int gguf_bool(const struct gguf *g, const char *key, int *v, struct err *e);
int gguf_string(const struct gguf *g, const char *key, struct gguf_str *v,
		struct err *e);
/* An array of n elements of type t (n = -1: any length). */
const struct gguf_kv *gguf_array(const struct gguf *g, const char *key,
				 enum gguf_vtype t, long n, struct err *e);

/* Element i of a numeric array, converted. */
double gguf_arr_num(const struct gguf_kv *kv, uint64_t i);

/* The tensor called name, or NULL. Borrowed. */
const struct gguf_tensor *gguf_tensor(const struct gguf *g, const char *name);

/* The tensor dequantised to FP32 (ne[0] x ne[1] x ... elements, ne[0]
 * contiguous). Caller frees. */
float *gguf_tensor_f32(const struct gguf_tensor *t);

/* The type's name ("u32", "array", ...), for messages. */
const char *gguf_vtype_name(enum gguf_vtype t);

#endif
