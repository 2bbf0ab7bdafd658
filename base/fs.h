/* fs.h: files whole: read at once, folders made with their parents, and
 * files written so that a reader sees the old one or the new one, never a
 * part (a temporary beside the target, then rename(2)); and where the
 * running binary lies. */
#ifndef HS_FS_H
#define HS_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct err;

/* The most bytes fs_slurp reads: an endless file (/dev/zero) is refused,
 * not read until memory runs out */
#define FS_SLURP_MAX ((size_t)2 << 30)

/* The whole file, NUL-terminated (caller frees), its length in *len if
 * len is not NULL; NULL with errno set if it cannot be read (EFBIG: over
 * FS_SLURP_MAX bytes). */
char *fs_slurp(const char *path, size_t *len);

/* mkdir -p: path and every missing folder above it. 0, or -1 with e's
 * message naming the folder that could not be made. */
int fs_mkdirs(const char *path, struct err *e);

/* A file being written atomically: fs_atomic_open gives a stream on a
 * hidden temporary beside path ("DIR/.NAME.tmp-PID"); fs_atomic_commit
 * closes it and renames it over path, or removes it if any write failed.
 * Every opened one must be committed (or abandoned with fs_atomic_abort). */
struct fs_atomic {
	FILE *f;
	char *tmp, *path; /* owned */
};
FILE *fs_atomic_open(struct fs_atomic *a, const char *path, struct err *e);
int fs_atomic_commit(struct fs_atomic *a, struct err *e);
void fs_atomic_abort(struct fs_atomic *a);

/* Whether a file can be made at path through fs_atomic: path is not a
 * folder, and its folder is there, a folder, and writable. 0, or -1 with
 * e's message. */
int fs_writable(const char *path, struct err *e);

/* Whether path is a folder (links followed) */
bool fs_is_dir(const char *path);
/* Whether paths a and b name one file, present or to be made: the same
 * file where both are there, else the same name in the same folder
 * ("x.json" and "./x.json") */
bool fs_same_file(const char *a, const char *b);
/* Whether path is a folder with nothing in it */
int fs_dir_empty(const char *path);

/* The folder of the running binary (/proc/self/exe without its last
 * component) into buf. 0, or -1 where it cannot be read or is longer than
 * n - 1. */
int fs_exe_dir(char *buf, size_t n);

/* A folder of the repository, rel (as "results/calib"): rel itself where
 * the working directory has it, else DIR/../rel for the running binary's
 * folder DIR (the binary lies in build/), so that a command finds the
 * committed files from any directory. Into buf; returns buf. */
const char *fs_repo_dir(const char *rel, char *buf, size_t n);

/* The UTF-8 byte order mark some editors put before a text (Windows'
 * Notepad, Excel's "CSV UTF-8"): the text is what follows it. */
#define FS_BOM "\xEF\xBB\xBF"
/* Reads past a byte order mark at f's position (its start); where there is
 * none, f is left where it was. */
void fs_skip_bom(FILE *f);

/* text into path through fs_atomic. 0, or -1 with e's message. */
int fs_write_atomic(const char *path, const char *text, struct err *e);

#endif
