/* fz.h: what the fuzz targets (fuzz/fz_*.c) share.
 *
 * A target is a function fz_NAME(data, size) that writes the bytes to a
 * file in a private temporary folder, hands its path to one of the
 * project's readers, uses and releases whatever the reader returned, and
 * returns the reader's result (0 or -1). FZ_TARGET(fz_NAME) adds
 * libFuzzer's entry point; tests/test_fuzz_regress.c defines FZ_NO_MAIN and
 * includes every target, to replay fuzz/regress/NAME/ in the normal build.
 * Everything here is static: one translation unit may include several
 * targets. */
#ifndef HS_FZ_H
#define HS_FZ_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef FZ_NO_MAIN
#define FZ_TARGET(fn)
#else
#define FZ_TARGET(fn)                                                   \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)    \
	{                                                               \
		(void)fn(data, size);                                   \
		return 0;                                               \
	}
#endif

static char fz_root[600];

/* Removes the folder's files, then the folder (it holds no folders). */
static inline void fz_cleanup(void)
{
	DIR *d = opendir(fz_root);
	struct dirent *de;
	char p[1200];

	if (!d)
		return;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			snprintf(p, sizeof(p), "%s/%s", fz_root, de->d_name);
			unlink(p);
		}
	closedir(d);
	rmdir(fz_root);
}

/* The private folder, made on first use and removed at exit. */
static inline const char *fz_dir(void)
{
	if (!fz_root[0]) {
		const char *t = getenv("TMPDIR");

		snprintf(fz_root, sizeof(fz_root), "%s/hybridspec-fz-XXXXXX",
			 t && *t ? t : "/tmp");
		if (!mkdtemp(fz_root)) {
			perror(fz_root);
			abort();
		}
		atexit(fz_cleanup);
	}
	return fz_root;
}

/* Writes n bytes to the folder's file name and returns its path (a static
 * buffer, reused every 8 calls). */
static inline const char *fz_put(const char *name, const uint8_t *data,
				 size_t n)
{
	static char paths[8][700];
	static int k;
	char *p = paths[k++ % 8];
	FILE *f;

	snprintf(p, sizeof(paths[0]), "%s/%s", fz_dir(), name);
	if (!(f = fopen(p, "wb")) || (n && fwrite(data, 1, n, f) != n) ||
	    fclose(f) != 0) {
		perror(p);
		abort();
	}
	return p;
}

static inline const char *fz_put_text(const char *name, const char *text)
{
	return fz_put(name, (const uint8_t *)text, strlen(text));
}

/* An acceptance trace (alpha 0.75) that profiles may name as "a.bits". */
static const char fz_bits[] = "# four bits\n0111\n";

#endif
