/* image_user.c - see image_user.h */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "image_user.h"
#include "sys.h"

#define NAME_MAX_LEN 64

static bool is_number(const char *s, size_t n)
{
	if (n == 0 || n > 10)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static bool is_name(const char *s, size_t n)
{
	if (n == 0 || n > NAME_MAX_LEN || s[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
			  c == '.' || c == '-' || (c == '$' && i == n - 1);
		if (!ok)
			return false;
	}
	return true;
}

bool image_user_spec_valid(const char *spec)
{
	const char *colon = strchr(spec, ':');
	size_t n = colon ? (size_t)(colon - spec) : strlen(spec);

	if (!(is_number(spec, n) || is_name(spec, n)))
		return false;
	if (!colon)
		return true;
	n = strlen(colon + 1);
	return is_number(colon + 1, n) || is_name(colon + 1, n);
}

/* The image's file path (/etc/passwd, /etc/group), read whole into memory from
 * inside the tree at root_fd.  Returns the text (malloc'd, NUL-terminated; *len
 * its length), or NULL with errno (ENOENT: not there). */
static char *read_image_file(int root_fd, const char *path, size_t *len)
{
	_cleanup_close_ int fd = open_in_root(root_fd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	char *text = NULL;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0)
		return NULL;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return NULL;
	}
	if (st.st_size > IMAGE_USER_FILE_MAX) {
		errno = EFBIG;
		return NULL;
	}
	if (read_fd(fd, IMAGE_USER_FILE_MAX, &text, len) < 0)
		return NULL;
	return text;
}

/* Opens the image's file as a stream: *out NULL when it is not there (no entry
 * then matches, as runc treats a missing file).  Returns 0, or -1 with err. */
static int open_db(int root_fd, const char *path, char **text, FILE **out, struct nsrun_error *err)
{
	size_t len = 0;

	*out = NULL;
	*text = read_image_file(root_fd, path, &len);
	if (!*text) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		error_set(err, errno, "read %s of the image%s", path, errno == EINVAL ? " (not a regular file)" : "");
		return -1;
	}
	if (len == 0)
		return 0;
	*out = fmemopen(*text, len, "r");
	if (!*out)
		return error_set(err, errno, "read %s of the image", path);
	return 0;
}

static int out_of_range(const char *what, const char *name, unsigned long id, struct nsrun_error *err)
{
	error_set(err, 0, "%s \"%s\" is id %lu in the image: beyond the ids a container has (0 to %d)", what, name, id,
		  IMAGE_USER_ID_MAX);
	err->hint = "give the container a user of a lower id: --user UID[:GID] (docs/userns.md)";
	return -1;
}

/* The user part: *uid and *gid (its passwd entry's group), *found_name when
 * found by name.  Returns 0 or -1 with err. */
static int lookup_user(int root_fd, const char *user, uid_t *uid, gid_t *gid, bool *by_name, struct nsrun_error *err)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	char buf[4096];
	struct passwd pw, *res = NULL;

	*by_name = false;
	if (is_number(user, strlen(user))) {
		unsigned long id = strtoul(user, NULL, 10);
		if (id > IMAGE_USER_ID_MAX)
			return out_of_range("user", user, id, err);
		*uid = (uid_t)id;
		*gid = (gid_t)id;
		return 0;
	}
	if (open_db(root_fd, "/etc/passwd", &text, &f, err) < 0)
		return error_prefix(err, "unable to find user %s", user);
	while (f && fgetpwent_r(f, &pw, buf, sizeof(buf), &res) == 0 && res) {
		if (strcmp(pw.pw_name, user) != 0)
			continue;
		if (pw.pw_uid > IMAGE_USER_ID_MAX || pw.pw_gid > IMAGE_USER_ID_MAX)
			return out_of_range("user", user, pw.pw_uid > IMAGE_USER_ID_MAX ? pw.pw_uid : pw.pw_gid, err);
		*uid = pw.pw_uid;
		*gid = pw.pw_gid;
		*by_name = true;
		return 0;
	}
	error_set(err, 0, "unable to find user %s: no matching entries in passwd file", user);
	err->hint = "the name is looked up in the image's own /etc/passwd: give one it has, or a number (UID[:GID])";
	return -1;
}

/* The group part by name, or (group NULL) the groups that list user as a
 * member.  Returns 0 or -1 with err. */
static int lookup_groups(int root_fd, const char *group, const char *user, gid_t primary, gid_t *gid, gid_t *groups,
			 size_t max_groups, size_t *n_groups, struct nsrun_error *err)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	char buf[16384];
	struct group gr, *res = NULL;

	if (open_db(root_fd, "/etc/group", &text, &f, err) < 0)
		return group ? error_prefix(err, "unable to find group %s", group) : -1;
	while (f && fgetgrent_r(f, &gr, buf, sizeof(buf), &res) == 0 && res) {
		if (group) {
			if (strcmp(gr.gr_name, group) != 0)
				continue;
			if (gr.gr_gid > IMAGE_USER_ID_MAX)
				return out_of_range("group", group, gr.gr_gid, err);
			*gid = gr.gr_gid;
			return 0;
		}
		bool member = false, seen = gr.gr_gid == primary || gr.gr_gid > IMAGE_USER_ID_MAX;
		for (char **m = gr.gr_mem; m && *m && !member; m++)
			member = strcmp(*m, user) == 0;
		for (size_t i = 0; i < *n_groups && !seen; i++)
			seen = groups[i] == gr.gr_gid;
		if (member && !seen && *n_groups < max_groups)
			groups[(*n_groups)++] = gr.gr_gid;
	}
	if (!group)
		return 0;
	error_set(err, 0, "unable to find group %s: no matching entries in group file", group);
	err->hint = "the name is looked up in the image's own /etc/group: give one it has, or a number (UID[:GID])";
	return -1;
}

int image_user_lookup(int root_fd, const char *spec, uid_t *uid, gid_t *gid, gid_t *groups, size_t max_groups,
		      size_t *n_groups, struct nsrun_error *err)
{
	char user[NAME_MAX_LEN + 1], *group;
	bool by_name;

	*n_groups = 0;
	if (!image_user_spec_valid(spec) || strlen(spec) >= sizeof(user) * 2)
		return error_set(err, 0, "user \"%s\": expected USER[:GROUP], each a name or a number", spec);
	snprintf(user, sizeof(user), "%.*s", (int)strcspn(spec, ":"), spec);
	group = strchr(spec, ':') ? strchr(spec, ':') + 1 : NULL;
	if (lookup_user(root_fd, user, uid, gid, &by_name, err) < 0)
		return -1;
	if (group && is_number(group, strlen(group))) {
		unsigned long id = strtoul(group, NULL, 10);
		if (id > IMAGE_USER_ID_MAX)
			return out_of_range("group", group, id, err);
		*gid = (gid_t)id;
		return 0;
	}
	if (!group && !by_name)
		return 0;
	return lookup_groups(root_fd, group, user, *gid, gid, groups, max_groups, n_groups, err);
}

int image_user_apply(struct nsrun_config *cfg, struct nsrun_error *err)
{
	_cleanup_close_ int root = -1;
	uid_t uid;
	gid_t gid;
	size_t n = 0;

	if (!cfg->user_spec)
		return 0;
	if (!cfg->rootfs)
		return error_set(err, 0, "--user \"%s\": a name needs an image to look it up in", cfg->user_spec);
	root = open(cfg->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return error_set(err, errno, "--user \"%s\": open the image's root %s", cfg->user_spec, cfg->rootfs);
	if (image_user_lookup(root, cfg->user_spec, &uid, &gid, cfg->process.additional_gids, NSRUN_MAX_GROUPS, &n,
			      err) < 0)
		return -1;
	cfg->process.uid = uid;
	cfg->process.gid = gid;
	/* with one gid mapped the kernel denies setgroups(2): fewer groups weaken nothing */
	cfg->process.n_additional_gids = cfg->userns == NSRUN_USERNS_SUBIDS ? n : 0;
	return 0;
}
