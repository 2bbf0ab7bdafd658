/* outdir.c: write-then-rename for whole directories.
 *
 * The temporary directory is "<parent>/.<name>.tmp-<pid>", on the same file
 * system as the target so that rename(2) is atomic. An existing target is
 * replaced only if it holds OD_MARKER: it is first renamed aside, the new
 * directory renamed in, and the old one removed. */
#define _XOPEN_SOURCE 700
#include "outdir.h"
#include "mem.h"
#include "fs.h"

#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *sibling(const char *dir, const char *what)
{
	const char *slash = strrchr(dir, '/');
	size_t head = slash ? (size_t)(slash - dir) + 1 : 0;
	size_t n = strlen(dir) + strlen(what) + 32;
	char *s = xmalloc(n);

	snprintf(s, n, "%.*s.%s.%s-%ld", (int)head, dir, dir + head, what,
		 (long)getpid());
	return s;
}

static int rm_entry(const char *path, const struct stat *sb, int flag,
		    struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void od_rm_tree(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* dir + "/" + name. Caller frees. */
static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *s = xmalloc(n);

	snprintf(s, n, "%s/%s", dir, name);
	return s;
}

static int is_results_dir(const char *dir)
{
	char *path = join(dir, OD_MARKER);
	int yes = access(path, F_OK) == 0;

	free(path);
	return yes;
}

int od_begin(struct od *o, const char *dir, struct err *e)
{
	struct stat st;
	char *trimmed = xstrdup(dir), *slash;
	size_t n = strlen(trimmed);

	while (n > 1 && trimmed[n - 1] == '/')
		trimmed[--n] = '\0';
	*o = (struct od){ 0 };
	if (stat(trimmed, &st) == 0 && !(S_ISDIR(st.st_mode) &&
					 is_results_dir(trimmed))) {
		err_set(e, "'%s' exists and is not a hybridspec results "
			"directory: refusing to replace it", trimmed);
		free(trimmed);
		return -1;
	}
	o->dir = trimmed;
	o->tmp = sibling(trimmed, "tmp");
	if ((slash = strrchr(trimmed, '/')) && slash > trimmed) {
		/* the folders above it; a failure shows at the mkdir below */
		*slash = '\0';
		fs_mkdirs(trimmed, NULL);
		*slash = '/';
	}
	od_rm_tree(o->tmp);
	if (mkdir(o->tmp, 0777) < 0) {
		err_set(e, "cannot create '%s': %s", o->tmp, strerror(errno));
		free(o->tmp);
		free(o->dir);
		*o = (struct od){ 0 };
		return -1;
	}
	return 0;
}

FILE *od_open(struct od *o, const char *name, struct err *e)
{
	char *path;
	FILE *f;

	HS_ASSERT(o->tmp != NULL);
	path = join(o->tmp, name);
	if (!(f = fopen(path, "w")))
		err_set(e, "cannot write '%s': %s", path, strerror(errno));
	free(path);
	return f;
}

int od_write(struct od *o, const char *name, const char *text, struct err *e)
{
	FILE *f = od_open(o, name, e);

	if (!f)
		return -1;
	fputs(text, f);
	if (fclose(f) != 0)
		return err_set(e, "cannot write '%s/%s': %s", o->tmp, name,
			       strerror(errno));
	return 0;
}

int od_commit(struct od *o, struct err *e)
{
	char *old = NULL;
	int rc = 0;

	HS_ASSERT(o->tmp != NULL);
	if (access(o->dir, F_OK) == 0) {
		old = sibling(o->dir, "old");
		od_rm_tree(old);
		if (rename(o->dir, old) < 0) {
			rc = err_set(e, "cannot move '%s' aside: %s", o->dir,
				     strerror(errno));
			goto out;
		}
	}
	if (rename(o->tmp, o->dir) < 0) {
		rc = err_set(e, "cannot rename '%s' to '%s': %s", o->tmp, o->dir,
			     strerror(errno));
		if (old)
			rename(old, o->dir);
		goto out;
	}
	free(o->tmp);
	o->tmp = NULL;
	if (old)
		od_rm_tree(old);
out:
	free(old);
	od_abort(o);
	return rc;
}

void od_abort(struct od *o)
{
	if (o->tmp) {
		od_rm_tree(o->tmp);
		free(o->tmp);
	}
	free(o->dir);
	*o = (struct od){ 0 };
}
