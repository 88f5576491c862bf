/* api_notls.c - linked into the static nsrun only: libmicrohttpd without HTTPS.
 *
 * Debian's libmicrohttpd.a is built with HTTPS, so it refers to GnuTLS, whose static
 * link needs p11-kit, which Debian ships only as a shared library; and GnuTLS would
 * run its initialisation in every nsrun, container runs included.  nsrun api serves
 * a unix socket and never sets MHD_USE_TLS, so libmicrohttpd calls none of these but
 * gnutls_global_init/deinit (from its constructor and destructor, which need do
 * nothing here).  Every other one ends the process: reaching one is a bug.  The link
 * fails if a new libmicrohttpd needs a function missing here: add it.
 * (Not in libnsrun.a: the tests and the dynamic nsrun link the real libraries.)
 */
#include <stdlib.h>
#include <unistd.h>

/* the prototypes are GnuTLS's; only the names matter to the linker */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"

void *(*gnutls_malloc)(size_t) = malloc;

int gnutls_global_init(void)
{
	return 0;
}

void gnutls_global_deinit(void)
{
}

static void __attribute__((noreturn)) no_tls(void)
{
	static const char msg[] = "nsrun: internal error: TLS code reached in nsrun api (built without TLS)\n";

	if (write(2, msg, sizeof(msg) - 1) < 0) {
		/* nothing more to do */
	}
	abort();
}

#define NO_TLS(name) \
	void name(void); \
	void name(void) \
	{ \
		no_tls(); \
	}

NO_TLS(gnutls_alpn_set_protocols)
NO_TLS(gnutls_bye)
NO_TLS(gnutls_certificate_allocate_credentials)
NO_TLS(gnutls_certificate_free_credentials)
NO_TLS(gnutls_certificate_server_set_request)
NO_TLS(gnutls_certificate_set_dh_params)
NO_TLS(gnutls_certificate_set_retrieve_function2)
NO_TLS(gnutls_certificate_set_retrieve_function3)
NO_TLS(gnutls_certificate_set_x509_key_mem)
NO_TLS(gnutls_certificate_set_x509_key_mem2)
NO_TLS(gnutls_certificate_set_x509_trust_mem)
NO_TLS(gnutls_cipher_get)
NO_TLS(gnutls_credentials_set)
NO_TLS(gnutls_deinit)
NO_TLS(gnutls_dh_params_deinit)
NO_TLS(gnutls_dh_params_import_pkcs3)
NO_TLS(gnutls_dh_params_init)
NO_TLS(gnutls_handshake)
NO_TLS(gnutls_init)
NO_TLS(gnutls_priority_deinit)
NO_TLS(gnutls_priority_init)
NO_TLS(gnutls_priority_set)
NO_TLS(gnutls_protocol_get_version)
NO_TLS(gnutls_psk_allocate_server_credentials)
NO_TLS(gnutls_psk_free_server_credentials)
NO_TLS(gnutls_psk_set_server_credentials_function)
NO_TLS(gnutls_record_check_pending)
NO_TLS(gnutls_record_get_direction)
NO_TLS(gnutls_record_recv)
NO_TLS(gnutls_record_send)
NO_TLS(gnutls_session_get_ptr)
NO_TLS(gnutls_session_set_ptr)
NO_TLS(gnutls_strerror)
NO_TLS(gnutls_transport_set_int2)
