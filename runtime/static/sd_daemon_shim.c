/* sd_daemon_shim.c - linked into the static nsrun only.
 *
 * Debian's libdbus-1.a is built with systemd socket activation: its
 * _dbus_listen_systemd_sockets() (a bus daemon listening on "systemd:" addresses)
 * calls sd_listen_fds(3) and sd_is_socket(3) from libsystemd, of which Debian ships
 * no static library.  nsrun is a D-Bus client only and never listens, so that code
 * never runs here; these two answer as libsystemd does when the process was not
 * socket-activated: no file descriptors passed (sd_listen_fds returns 0), and no fd is
 * such a socket.  The dynamic builds link the real libsystemd through libdbus-1.so.
 */
int sd_listen_fds(int unset_environment);
int sd_is_socket(int fd, int family, int type, int listening);

int sd_listen_fds(int unset_environment)
{
	(void)unset_environment;
	return 0;
}

int sd_is_socket(int fd, int family, int type, int listening)
{
	(void)fd;
	(void)family;
	(void)type;
	(void)listening;
	return 0;
}
