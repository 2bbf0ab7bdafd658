/* outdir.c: write-then-rename for whole directories.
 *
 * The temporary directory is "<parent>/.<name>.tmp-<pid>", on the same file
 * system as the target so that rename(2) is atomic. An existing target is
 * replaced only when asked and only if it holds a manifest (OD_MANIFEST)
 * and no file that it, or the manifest of a results directory nested in
 * it, does not list: it is first renamed aside, the new directory
 * renamed in, and the old one removed. The manifest is written last, from
 * a walk of the temporary directory, so it lists whatever the command put
 * there (its own writes and its workers'). */
#define _XOPEN_SOURCE 700
#include "outdir.h"
#include "mem.h"
#include "fs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OD_KIND_LINE "#kind " /* the manifest's first line: "#kind run" */

static char *sibling(const char *dir, const char *what)
{
	const char *slash = strrchr(dir, '/');
	size_t head = slash ? (size_t)(slash - dir) + 1 : 0;
	size_t n = strlen(dir) + strlen(what) + 32;
	char *s = xmalloc(n);

	/* the name cut to 200 bytes: the temporary's must fit NAME_MAX too */
	snprintf(s, n, "%.*s.%.200s.%s-%ld", (int)head, dir, dir + head, what,
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

/* The pid a temporary's name ends in (".NAME.tmp-PID", ".NAME.old-PID"),
 * and whether a "tmp" one (else "old"); 0 where the name is not one */
static long litter_pid(const char *name, bool *tmp)
{
	const char *at = name[0] == '.' ? strrchr(name, '.') : NULL;
	char *end;
	long pid;

	if (!at || at == name || (strncmp(at, ".tmp-", 5) &&
				  strncmp(at, ".old-", 5)) ||
	    !isdigit((unsigned char)at[5]))
		return 0;
	errno = 0;
	pid = strtol(at + 5, &end, 10);
	*tmp = at[1] == 't';
	return *end || errno || pid <= 0 ? 0 : pid;
}

/* Whether the folder path holds an entry name */
static bool holds(const char *path, const char *name)
{
	char *p = join(path, name);
	bool yes = access(p, F_OK) == 0;

	free(p);
	return yes;
}

bool od_is_litter(const char *path, const char *name)
{
	struct stat st;
	bool tmp;

	if (!litter_pid(name, &tmp) || lstat(path, &st) < 0)
		return false;
	if (!S_ISDIR(st.st_mode)) /* a file's atomic write */
		return S_ISREG(st.st_mode) && tmp;
	/* results moved aside; or a temporary: marked when made, and its
	 * manifest written before the mark goes (od_commit). One killed (a
	 * sweep's worker, SIGTERM) between its mkdir and its mark is empty,
	 * and holds nothing to lose. */
	if (!tmp)
		return holds(path, OD_MANIFEST);
	return holds(path, OD_TMP_MARK) || holds(path, OD_MANIFEST) ||
	       fs_dir_empty(path);
}

bool od_is_stale(const char *path, const char *name)
{
	bool tmp;
	long pid = litter_pid(name, &tmp);

	/* this process's own is alive too: kill answers 0 */
	return od_is_litter(path, name) && kill((pid_t)pid, 0) < 0 &&
	       errno == ESRCH;
}

/* Removes what runs of dir killed outright (SIGKILL, a crash) left beside
 * it: sibling(dir, "tmp") and sibling(dir, "old") of a process that is
 * gone, each the tool's (od_is_litter). A live process's (another run of
 * the same folder) is left, and a user's folder of such a name. */
static void rm_stale(const char *dir)
{
	const char *slash = strrchr(dir, '/');
	const char *base = slash ? slash + 1 : dir;
	char *parent = xstrdup(slash ? dir : "./"), prefix[256];
	size_t np;
	DIR *d;
	struct dirent *de;

	parent[slash ? (size_t)(slash - dir) + 1 : 2] = '\0';
	np = (size_t)snprintf(prefix, sizeof(prefix), ".%.200s.", base);
	if (!(d = opendir(parent))) {
		free(parent);
		return;
	}
	while ((de = readdir(d))) {
		char *path;

		if (strncmp(de->d_name, prefix, np))
			continue;
		path = xmalloc(strlen(parent) + strlen(de->d_name) + 1);
		sprintf(path, "%s%s", parent, de->d_name);
		if (od_is_stale(path, de->d_name))
			od_rm_tree(path);
		free(path);
	}
	closedir(d);
	free(parent);
}

/* A results directory: its marker, or a manifest (a folder of results
 * with no config, such as plot's). */
static int is_results_dir(const char *dir)
{
	char *path = join(dir, OD_MARKER), *list = join(dir, OD_MANIFEST);
	int yes = access(path, F_OK) == 0 || access(list, F_OK) == 0;

	free(path);
	free(list);
	return yes;
}

/* The kind a manifest's text names ("#kind run"), its length in *n; NULL
 * for one written before kinds */
static const char *kind_named(const char *text, size_t *n)
{
	size_t had = strlen(OD_KIND_LINE);

	if (strncmp(text, OD_KIND_LINE, had))
		return NULL;
	*n = strcspn(text + had, "\n");
	return text + had;
}

/* Whether a manifest's text names kind */
static bool names_kind(const char *text, const char *kind)
{
	size_t n;
	const char *k = kind_named(text, &n);

	return k && n == strlen(kind) && !strncmp(k, kind, n);
}

/* Whether dir holds results of kind, its manifest says. */
static bool of_kind(const char *dir, const char *kind)
{
	char *path = join(dir, OD_MANIFEST), *text = fs_slurp(path, NULL);
	bool yes = text && names_kind(text, kind);

	free(path);
	free(text);
	return yes;
}

/* Whether a manifest's text has the line name (a folder's ends in '/') */
static bool lists(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *line = text; line && *line; ) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);

		if (len == n && !strncmp(line, name, n))
			return true;
		line = end ? end + 1 : NULL;
	}
	return false;
}

/* Whether a results directory nested in the walked one, between it and
 * the entry at rel (its path from the walked root, at path; a folder's
 * with a '/' at its end), lists the entry in its own manifest: plots
 * written into a run's folder are the tool's too. */
static int nested_listed(const char *path, const char *rel)
{
	size_t root = (size_t)(rel - path);
	char *dir = xstrdup(path), *slash;
	int yes = 0;

	if (strlen(dir) > 1 && dir[strlen(dir) - 1] == '/')
		dir[strlen(dir) - 1] = '\0';
	while (!yes && (slash = strrchr(dir, '/')) && (size_t)(slash - dir) >
							 root) {
		char *list, *text;

		*slash = '\0';
		list = join(dir, OD_MANIFEST);
		if ((text = fs_slurp(list, NULL))) {
			yes = lists(text, path + strlen(dir) + 1);
			free(text);
		}
		free(list);
	}
	free(dir);
	return yes;
}

/* The walk's state: nftw takes no argument, so one walk at a time. */
static struct {
	size_t root;      /* length of the walked directory's path + 1 */
	char *listed;     /* the manifest's text, or NULL: none */
	const char *const *own; /* names the walked root's top may hold, or
				   NULL: any folder */
	char *found;      /* owned: the first entry not the tool's */
	bool unreadable;  /* found is a folder that cannot be read */
	FILE *out;        /* the manifest being written */
} walk;

/* Whether the entry at path, rel of it from a walked root, lies in the
 * tool's litter (od_is_litter of itself or a folder above it) */
static int in_litter(const char *path, const char *rel)
{
	char *at = xstrdup(path), *cut = at + (rel - path);
	int yes = 0;

	for (char *name = cut; name && !yes; ) {
		char *end = strchr(name, '/'), keep;

		if (end) {
			keep = *end;
			*end = '\0';
		}
		yes = od_is_litter(at, name);
		if (end)
			*end = keep;
		name = end ? end + 1 : NULL;
	}
	free(at);
	return yes;
}

/* Whether the walked root's entry rel is one of walk.own at its top */
static int own_name(const char *rel)
{
	if (!walk.own || strchr(rel, '/'))
		return 0;
	for (const char *const *n = walk.own; *n; n++)
		if (!strcmp(rel, *n))
			return 1;
	return 0;
}

/* An entry is the tool's where a manifest lists it (the walked folder's,
 * or a nested results folder's), it is one of walk.own at the top, or it
 * lies in a killed run's temporary. A folder's entries are checked in
 * turn; at the top of a walk with walk.own, a folder not among them and
 * not plot's is a stranger. Under a manifest (walk.listed) an empty
 * folder must be listed too, or something below it (a user's empty
 * folder is found, not removed with the rest); a sweep's (walk.own)
 * makes its points' folders before their runs are written. */
static int check_entry(const char *path, const struct stat *sb, int flag,
		       struct FTW *ftw)
{
	const char *rel = path + walk.root;
	bool folder = flag == FTW_D || flag == FTW_DP;
	char *name, *full;
	int listed;

	(void)sb;
	if (ftw->level == 0 || !strcmp(path + ftw->base, OD_MANIFEST) ||
	    in_litter(path, rel) || own_name(rel))
		return 0;
	if (flag == FTW_DNR) {
		walk.found = xstrdup(rel);
		walk.unreadable = true;
		return 1;
	}
	if (folder && walk.own && !strchr(rel, '/')) {
		/* figures plot drew there (a sweep's folder) are checked;
		 * another command's results are not the walked folder's to
		 * replace */
		if (of_kind(path, "plot"))
			return 0;
		walk.found = xstrdup(rel);
		return 1;
	}
	if (folder && (!walk.listed || !fs_dir_empty(path)))
		return 0;
	name = xmalloc(strlen(rel) + 2);
	full = xmalloc(strlen(path) + 2);
	sprintf(name, "%s%s", rel, folder ? "/" : "");
	sprintf(full, "%s%s", path, folder ? "/" : "");
	listed = (walk.listed && lists(walk.listed, name)) ||
		 nested_listed(full, full + (rel - path));
	free(name);
	free(full);
	if (!listed)
		walk.found = xstrdup(rel);
	return !listed;
}

/* Walks dir for what the tool did not write (walk.listed and walk.own
 * set): 0, or -1 with e's message naming it */
static int check_walk(const char *named, struct err *e)
{
	char *dir = xstrdup(named);
	size_t n = strlen(dir);
	int rc = 0;

	while (n > 1 && dir[n - 1] == '/') /* "out/" walks as "out" */
		dir[--n] = '\0';
	walk.root = n + 1;
	walk.found = NULL;
	walk.unreadable = false;
	if (nftw(dir, check_entry, 16, FTW_PHYS) != 0)
		rc = !walk.found
			? err_set(e, "cannot read '%s': %s", dir, strerror(errno))
		: walk.unreadable
			? err_set(e, "'%s/%s' cannot be read: refusing to replace "
				  "'%s'", dir, walk.found, dir)
			: err_set(e, "'%s/%s' was not written by hybridspec: "
				  "refusing to replace '%s' (move it out, or name "
				  "another folder)", dir, walk.found, dir);
	free(walk.found);
	walk.found = NULL;
	free(dir);
	return rc;
}

int od_check_own(const char *dir, const char *const *own, struct err *e)
{
	walk.listed = NULL;
	walk.own = own;
	return check_walk(dir, e);
}

static int list_entry(const char *path, const struct stat *sb, int flag,
		      struct FTW *ftw)
{
	(void)sb;
	if (flag == FTW_F && strcmp(path + walk.root, OD_MANIFEST) &&
	    strcmp(path + walk.root, OD_TMP_MARK))
		fprintf(walk.out, "%s\n", path + walk.root);
	else if (flag == FTW_D && ftw->level > 0) /* an empty one too */
		fprintf(walk.out, "%s/\n", path + walk.root);
	return 0;
}

/* Whether dir (a results directory) may be replaced by kind's: its
 * manifest's kind the same (or none), every file in it listed in its
 * manifest. Without a manifest nothing says which files are the tool's
 * (a file a user named OD_MARKER looks like results): refused. */
static int check_replace(const char *dir, const char *kind, struct err *e)
{
	char *path = join(dir, OD_MANIFEST), *text = fs_slurp(path, NULL);
	const char *had;
	size_t n;
	int rc = 0;

	free(path);
	if (!text)
		return err_set(e, "'%s' has no list of the files hybridspec wrote "
			       "there (%s): refusing to replace it (move its "
			       "files out, or name another folder)", dir,
			       OD_MANIFEST);
	if ((had = kind_named(text, &n)) && !names_kind(text, kind)) {
		rc = err_set(e, "'%s' holds the results of hybridspec %.*s, "
			     "not of hybridspec %s: --overwrite replaces only "
			     "results of the same command (name another "
			     "folder)", dir, (int)n, had, kind);
		free(text);
		return rc;
	}
	walk.listed = text;
	walk.own = NULL;
	rc = check_walk(dir, e);
	walk.listed = NULL;
	free(text);
	return rc;
}

int od_begin(struct od *o, const char *dir, const char *kind, bool replace,
	     struct err *e)
{
	struct stat st;
	char *trimmed = xstrdup(dir), *slash;
	size_t n = strlen(trimmed);
	bool exists;

	while (n > 1 && trimmed[n - 1] == '/')
		trimmed[--n] = '\0';
	*o = (struct od){ 0 };
	if (!n) {
		free(trimmed);
		return err_set(e, "an empty folder name: name the results folder");
	}
	slash = strrchr(trimmed, '/');
	if (!strcmp(slash ? slash + 1 : trimmed, ".") ||
	    !strcmp(slash ? slash + 1 : trimmed, "..")) {
		err_set(e, "'%s' is a folder's own name for itself or its "
			"parent: name the results folder", trimmed);
		free(trimmed);
		return -1;
	}
	if (lstat(trimmed, &st) == 0 && S_ISLNK(st.st_mode)) {
		err_set(e, "'%s' is a symbolic link: name the folder it points "
			"to (a link is not replaced)", trimmed);
		free(trimmed);
		return -1;
	}
	if (strlen(slash ? slash + 1 : trimmed) > NAME_MAX) {
		err_set(e, "'%s': a folder name of %zu bytes, more than the %d a "
			"file system takes: name a shorter one", trimmed,
			strlen(slash ? slash + 1 : trimmed), NAME_MAX);
		free(trimmed);
		return -1;
	}
	/* an empty folder holds nothing to lose: taken as absent */
	exists = stat(trimmed, &st) == 0 &&
		 !(S_ISDIR(st.st_mode) && fs_dir_empty(trimmed));
	if (exists && !(S_ISDIR(st.st_mode) && is_results_dir(trimmed))) {
		char *sweep = join(trimmed, "sweep.json");

		if (S_ISDIR(st.st_mode) && access(sweep, F_OK) == 0)
			err_set(e, "'%s' holds the results of hybridspec sweep: "
				"refusing to replace them with those of "
				"hybridspec %s (name another folder)", trimmed,
				kind);
		else
			err_set(e, "'%s' exists and is not a hybridspec results "
				"directory: refusing to replace it", trimmed);
		free(sweep);
		free(trimmed);
		return -1;
	}
	/* checked without --overwrite too: "add --overwrite" only where it
	 * would do */
	if (exists && (check_replace(trimmed, kind, e) < 0 ||
		       (!replace && err_set(e, "'%s' holds results already: "
					    "add --overwrite to replace them, "
					    "or name another folder",
					    trimmed) < 0))) {
		free(trimmed);
		return -1;
	}
	o->dir = trimmed;
	o->kind = kind;
	o->had = exists;
	o->tmp = sibling(trimmed, "tmp");
	if ((slash = strrchr(trimmed, '/')) && slash > trimmed) {
		int made;

		*slash = '\0'; /* the folders above it */
		made = fs_mkdirs(trimmed, e);
		*slash = '/';
		if (made < 0)
			goto fail;
	}
	rm_stale(trimmed);
	od_rm_tree(o->tmp);
	if (mkdir(o->tmp, 0777) < 0) {
		err_set(e, "cannot create '%s': %s", o->tmp, strerror(errno));
		goto fail;
	}
	if (od_write(o, OD_TMP_MARK, "", e) < 0) {
		od_rm_tree(o->tmp);
		goto fail;
	}
	return 0;
fail:
	free(o->tmp);
	free(o->dir);
	*o = (struct od){ 0 };
	return -1;
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

/* Lists every file and folder of the temporary directory in its
 * manifest. */
static int write_manifest(struct od *o, struct err *e)
{
	char *path = join(o->tmp, OD_MANIFEST);
	int rc = 0;

	if (!(walk.out = fopen(path, "w")))
		rc = err_set(e, "cannot write '%s': %s", path, strerror(errno));
	else {
		fprintf(walk.out, OD_KIND_LINE "%s\n", o->kind);
		walk.root = strlen(o->tmp) + 1;
		nftw(o->tmp, list_entry, 16, FTW_PHYS);
		if (fclose(walk.out) != 0)
			rc = err_set(e, "cannot write '%s': %s", path,
				     strerror(errno));
	}
	free(path);
	return rc;
}

/* Whether o->dir may still be replaced, now that the results are
 * written: what od_begin found may have changed meanwhile (a user's file
 * put in, another run's results written). 0, or -1 with e's message. */
static int still_replaceable(const struct od *o, struct err *e)
{
	struct stat st;

	if (lstat(o->dir, &st) < 0 || (S_ISDIR(st.st_mode) &&
				       fs_dir_empty(o->dir)))
		return 0;
	if (!o->had)
		return err_set(e, "'%s' appeared while hybridspec %s wrote its "
			       "results (another run, or by hand): refusing to "
			       "replace it (run again, or name another "
			       "folder)", o->dir, o->kind);
	if (!S_ISDIR(st.st_mode)) /* a link or a file put in its place */
		return err_set(e, "'%s' changed while hybridspec %s wrote its "
			       "results: no longer a folder", o->dir, o->kind);
	if (check_replace(o->dir, o->kind, e) < 0)
		return err_prefix(e, "'%s' changed while hybridspec %s wrote "
				  "its results", o->dir, o->kind);
	return 0;
}

int od_commit(struct od *o, struct err *e)
{
	char *old = NULL, *mark;
	int rc = 0;

	HS_ASSERT(o->tmp != NULL);
	/* the manifest first: a temporary always holds the mark or it */
	if (write_manifest(o, e) < 0) {
		rc = -1;
		goto out;
	}
	mark = join(o->tmp, OD_TMP_MARK);
	remove(mark);
	free(mark);
	if (still_replaceable(o, e) < 0) {
		rc = -1;
		goto out;
	}
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
