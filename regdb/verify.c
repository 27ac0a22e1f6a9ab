// SPDX-License-Identifier: GPL-2.0
/* Signature check of regulatory.db.p7s with OpenSSL's libcrypto. */
#include "build/config.h"
#include "regdb/regdb.h"

#include <stdio.h>

#if HAVE_OPENSSL
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>

static int vfail(struct regdb_error *err, const char *what, const char *path)
{
	unsigned long e = ERR_get_error();
	char ossl[120] = "";

	if (e)
		ERR_error_string_n(e, ossl, sizeof(ossl));
	if (err)
		snprintf(err->msg, sizeof(err->msg), "%s%s%.80s%s%s", what, path ? " " : "",
			 path ? path : "", e ? ": " : "", ossl);
	ERR_clear_error();
	return -1;
}

static STACK_OF(X509) *read_certs(const char *path)
{
	STACK_OF(X509) *certs = sk_X509_new_null();
	BIO *in = BIO_new_file(path, "rb");
	X509 *x;

	if (!certs || !in) {
		BIO_free(in);
		sk_X509_free(certs);
		return NULL;
	}
	while ((x = PEM_read_bio_X509(in, NULL, NULL, NULL)))
		sk_X509_push(certs, x);
	if (!sk_X509_num(certs) && BIO_reset(in) == 0 && (x = d2i_X509_bio(in, NULL)))
		sk_X509_push(certs, x);
	BIO_free(in);
	ERR_clear_error();
	if (!sk_X509_num(certs)) {
		sk_X509_free(certs);
		return NULL;
	}
	return certs;
}

int regdb_verify_signature(const void *data, size_t len, const void *sig, size_t sig_len,
			   const char *cert_path, struct regdb_error *err)
{
	STACK_OF(X509) *certs = read_certs(cert_path);

	if (!certs)
		return vfail(err, "no X.509 certificate in", cert_path);
	const unsigned char *p = sig;
	PKCS7 *p7 = d2i_PKCS7(NULL, &p, (long)sig_len);
	BIO *body = BIO_new_mem_buf(data, (int)len);
	X509_STORE *store = X509_STORE_new();
	int rc = -1;

	if (!p7)
		vfail(err, "signature is not DER PKCS#7", NULL);
	else if (!body || !store)
		vfail(err, "out of memory", NULL);
	else if (PKCS7_verify(p7, certs, store, body, NULL,
			      PKCS7_NOVERIFY | PKCS7_NOINTERN | PKCS7_BINARY) != 1)
		vfail(err, "signature does not verify against", cert_path);
	else
		rc = 0;
	X509_STORE_free(store);
	BIO_free(body);
	PKCS7_free(p7);
	sk_X509_pop_free(certs, X509_free);
	return rc;
}
#else
int regdb_verify_signature(const void *data, size_t len, const void *sig, size_t sig_len,
			   const char *cert_path, struct regdb_error *err)
{
	if (err)
		snprintf(err->msg, sizeof(err->msg), "built without OpenSSL: cannot verify");
	return -1;
}
#endif
