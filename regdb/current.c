// SPDX-License-Identifier: GPL-2.0
/* The stack-wide current regulatory domain: hints, reload, snapshot swap. */
#include "regdb/regdb.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct regdb_snapshot {
	atomic_int refs;
	struct regdb_domain *dom;
};

struct regdb_current {
	pthread_mutex_t lock; /* writers, and readers taking a reference */
	struct regdb_db *db;
	char user[3], country_ie[3]; /* "" when unset */
	struct regdb_snapshot *snap;
	_Atomic uint64_t gen;
};

static int cur_fail(struct regdb_error *err, const char *msg, const char *cc)
{
	if (err)
		snprintf(err->msg, sizeof(err->msg), "%s '%.2s'", msg, cc);
	return -1;
}

/* The domain the hints give on db: a fresh copy, or NULL with err set. */
static struct regdb_domain *effective(const struct regdb_db *db, const char *user,
				      const char *ie, struct regdb_error *err)
{
	const struct regdb_domain *base = regdb_db_find(db, user[0] ? user : "00");
	const struct regdb_domain *cie = ie[0] ? regdb_db_find(db, ie) : NULL;

	if (!base) {
		cur_fail(err, "no regulatory domain for", user[0] ? user : "00");
		return NULL;
	}
	if (ie[0] && !cie) {
		cur_fail(err, "no regulatory domain for country IE", ie);
		return NULL;
	}
	if (!cie)
		return regdb_domain_dup(base);
	if (!user[0] || !memcmp(user, ie, 2))
		return regdb_domain_dup(cie);
	struct regdb_domain *x = regdb_intersect(base, cie);

	if (!x)
		cur_fail(err, "user domain and country IE have nothing in common:", ie);
	return x;
}

void regdb_snapshot_put(struct regdb_snapshot *s)
{
	if (s && atomic_fetch_sub(&s->refs, 1) == 1) {
		free(s->dom);
		free(s);
	}
}

/* Build the new snapshot for (db, user, ie) and publish it; lock held. */
static int publish(struct regdb_current *cur, struct regdb_db *db, const char *user,
		   const char *ie, struct regdb_error *err)
{
	struct regdb_snapshot *s = calloc(1, sizeof(*s));

	if (!s)
		return cur_fail(err, "out of memory", "");
	s->dom = effective(db, user, ie, err);
	if (!s->dom) {
		free(s);
		return -1;
	}
	atomic_init(&s->refs, 1);
	struct regdb_snapshot *old = cur->snap;

	cur->snap = s;
	snprintf(cur->user, sizeof(cur->user), "%s", user);
	snprintf(cur->country_ie, sizeof(cur->country_ie), "%s", ie);
	atomic_fetch_add_explicit(&cur->gen, 1, memory_order_release);
	regdb_snapshot_put(old);
	return 0;
}

struct regdb_current *regdb_current_new(struct regdb_db *db, struct regdb_error *err)
{
	struct regdb_current *cur = calloc(1, sizeof(*cur));

	if (!cur) {
		regdb_db_free(db);
		cur_fail(err, "out of memory", "");
		return NULL;
	}
	pthread_mutex_init(&cur->lock, NULL);
	cur->db = db;
	if (publish(cur, db, "", "", err)) {
		regdb_current_free(cur);
		return NULL;
	}
	return cur;
}

void regdb_current_free(struct regdb_current *cur)
{
	if (!cur)
		return;
	regdb_snapshot_put(cur->snap);
	regdb_db_free(cur->db);
	pthread_mutex_destroy(&cur->lock);
	free(cur);
}

static int set_hints(struct regdb_current *cur, const char *user, const char *ie,
		     struct regdb_error *err)
{
	char u[3], c[3];

	snprintf(u, sizeof(u), "%s", user ? user : cur->user);
	snprintf(c, sizeof(c), "%s", ie ? ie : cur->country_ie);
	return publish(cur, cur->db, u, c, err);
}

static bool valid_cc(const char *cc)
{
	return cc && strlen(cc) == 2;
}

int regdb_current_set_user(struct regdb_current *cur, const char *alpha2, struct regdb_error *err)
{
	if (!valid_cc(alpha2))
		return cur_fail(err, "not a two-letter country code:", alpha2 ? alpha2 : "");
	pthread_mutex_lock(&cur->lock);
	int rc = set_hints(cur, alpha2, NULL, err);

	pthread_mutex_unlock(&cur->lock);
	return rc;
}

int regdb_current_set_country_ie(struct regdb_current *cur, const char *alpha2,
				 struct regdb_error *err)
{
	if (!valid_cc(alpha2))
		return cur_fail(err, "not a two-letter country code:", alpha2 ? alpha2 : "");
	pthread_mutex_lock(&cur->lock);
	int rc = set_hints(cur, NULL, alpha2, err);

	pthread_mutex_unlock(&cur->lock);
	return rc;
}

void regdb_current_clear_country_ie(struct regdb_current *cur)
{
	pthread_mutex_lock(&cur->lock);
	set_hints(cur, NULL, "", NULL); /* the user's or world domain always exists */
	pthread_mutex_unlock(&cur->lock);
}

static int reload(struct regdb_current *cur, const char *path, const char *user,
		  struct regdb_error *err)
{
	struct regdb_db *db;
	char u[3], c[3]; /* publish() writes the hints it is given */

	if (regdb_load(path, &db, err))
		return -1;
	pthread_mutex_lock(&cur->lock);
	snprintf(u, sizeof(u), "%s", user ? user : cur->user);
	snprintf(c, sizeof(c), "%s", cur->country_ie);
	int rc = publish(cur, db, u, c, err);

	if (rc) {
		regdb_db_free(db);
	} else {
		regdb_db_free(cur->db);
		cur->db = db;
	}
	pthread_mutex_unlock(&cur->lock);
	return rc;
}

int regdb_current_reload(struct regdb_current *cur, const char *path, struct regdb_error *err)
{
	return reload(cur, path, NULL, err);
}

int regdb_current_reload_user(struct regdb_current *cur, const char *path, const char *alpha2,
			      struct regdb_error *err)
{
	if (!valid_cc(alpha2))
		return cur_fail(err, "not a two-letter country code:", alpha2 ? alpha2 : "");
	return reload(cur, path, alpha2, err);
}

struct regdb_snapshot *regdb_current_get(struct regdb_current *cur)
{
	pthread_mutex_lock(&cur->lock);
	struct regdb_snapshot *s = cur->snap;

	atomic_fetch_add(&s->refs, 1);
	pthread_mutex_unlock(&cur->lock);
	return s;
}

const struct regdb_domain *regdb_snapshot_domain(const struct regdb_snapshot *s)
{
	return s->dom;
}

void regdb_reader_init(struct regdb_reader *rd, struct regdb_current *cur)
{
	rd->cur = cur;
	rd->gen = atomic_load_explicit(&cur->gen, memory_order_acquire);
	rd->snap = regdb_current_get(cur);
}

void regdb_reader_release(struct regdb_reader *rd)
{
	regdb_snapshot_put(rd->snap);
	rd->snap = NULL;
}

void regdb_reader_verdict(struct regdb_reader *rd, const struct regdb_query *q,
			  struct regdb_verdict *v)
{
	uint64_t gen = atomic_load_explicit(&rd->cur->gen, memory_order_acquire);

	if (gen != rd->gen) {
		regdb_snapshot_put(rd->snap);
		rd->snap = regdb_current_get(rd->cur);
		rd->gen = gen;
	}
	regdb_verdict(rd->snap->dom, q, v);
}
