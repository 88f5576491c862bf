/* archive_shim.c - linked into the static nsrun only.
 *
 * Debian's libarchive.a keeps __archive_write_entry_filetype_unsupported(), which
 * its tar writers call for a file type tar cannot hold (a socket), in the object of
 * archive_write_set_format(3), whose table names every format libarchive writes;
 * linking it pulls in the xar writer, hence libxml2 and ICU (tens of MiB, no use to
 * nsrun, which writes pax only: copy_archive.c).  This stand-in does what that
 * function does, sets the archive's error; the entry is then skipped by the writer
 * (ARCHIVE_WARN).  The dynamic builds link the real one through libarchive.so.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>

void __archive_write_entry_filetype_unsupported(struct archive *a, struct archive_entry *entry,
						const char *format);

void __archive_write_entry_filetype_unsupported(struct archive *a, struct archive_entry *entry,
						const char *format)
{
	archive_set_error(a, EINVAL, "%s: %s format cannot archive this type of file",
			  archive_entry_pathname(entry), format);
}
