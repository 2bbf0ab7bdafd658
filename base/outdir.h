/* outdir.h: a results directory that appears whole or not at all.
 *
 * od_begin makes a hidden temporary sibling of the target; files are written
 * there; od_commit lists them in OD_MANIFEST and renames the directory into
 * place (replacing, when asked to, an earlier results directory of
 * hybridspec's that holds no file but those its manifest, or a nested
 * results directory's, lists: never a file the tool did not write);
 * od_abort removes it. A run that fails or is
 * killed never leaves a half-written DIR; the temporary a run killed
 * outright (SIGKILL) leaves, od_begin of the same DIR removes once that
 * process is gone. */
#ifndef HS_OUTDIR_H
#define HS_OUTDIR_H

#include <stdbool.h>
#include <stdio.h>

#include "err.h"

/* The file that marks a directory as hybridspec's results, and the list of
 * the files and folders hybridspec wrote in it (a path a line, relative,
 * a folder's ending in '/'; the first line "#kind KIND", the command's
 * results they are). */
#define OD_MARKER "config.resolved.json"
#define OD_MANIFEST ".hybridspec-files"

struct od {
	char *dir;        /* owned: the target path */
	char *tmp;        /* owned: the temporary directory, NULL once done */
	const char *kind; /* borrowed: "run", "plan", ...: what it holds */
	bool had;         /* dir held results od_begin found replaceable:
			     od_commit checks them again; else a dir that
			     appeared meanwhile is refused */
};

/* Checks that dir can be placed and makes the temporary directory for a
 * command's results of this kind (a static string). An existing dir is
 * refused unless replace; then it must be a results directory of the
 * same kind (or one written before kinds were) whose every file its
 * manifest lists, and every folder one it lists or holds something it
 * lists (one without a manifest is refused: nothing says which files are
 * the tool's). The messages say what to do, and a folder that --overwrite
 * could not replace is refused with why, --overwrite or not. */
int od_begin(struct od *o, const char *dir, const char *kind, bool replace,
	     struct err *e);
/* Opens name for writing in the temporary directory. Caller fcloses. */
FILE *od_open(struct od *o, const char *name, struct err *e);
/* Writes a whole file from a string. */
int od_write(struct od *o, const char *name, const char *text, struct err *e);
/* Puts the directory in place. Releases o either way. */
int od_commit(struct od *o, struct err *e);
/* Removes the temporary directory and releases o. Safe after od_commit. */
void od_abort(struct od *o);

/* Whether everything below dir is the tool's: listed in the manifest of a
 * results directory within dir, one of the names own (NULL-terminated)
 * at dir's top (a folder at its top not among them is a stranger), or a
 * killed run's temporary. 0, or -1 with e's message naming the first
 * entry that is not, or that cannot be read. */
int od_check_own(const char *dir, const char *const *own, struct err *e);

/* The file in a temporary directory that marks it as the tool's, while
 * it is written (removed at od_commit) */
#define OD_TMP_MARK ".hybridspec-tmp"

/* Whether the folder entry name, at path, is the tool's hidden temporary
 * (".NAME.tmp-PID": a folder holding OD_TMP_MARK or OD_MANIFEST, or empty,
 * or a file of an atomic write; ".NAME.old-PID": a folder holding
 * OD_MANIFEST), live or not. A user's folder of such a name holding
 * neither is not. */
bool od_is_litter(const char *path, const char *name);
/* od_is_litter, and its process gone: safe to remove. */
bool od_is_stale(const char *path, const char *name);

/* Removes path and everything below it (no links followed); errors are
 * ignored: what cannot be removed stays. */
void od_rm_tree(const char *path);

#endif
