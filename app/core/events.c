#include <sodium.h>

#include "../lib/common.h"
#include "events.h"

void
event_id(char out[EVENT_ID_LEN + 1])
{
	static const char b32[] = "abcdefghijklmnopqrstuvwxyz234567";
	unsigned char rnd[24];
	size_t i;

	randombytes_buf(rnd, sizeof(rnd));
	out[0] = 'e';
	out[1] = 'v';
	out[2] = 't';
	out[3] = '_';
	for (i = 0; i < sizeof(rnd); i++)
		out[4 + i] = b32[rnd[i] & 31];
	out[EVENT_ID_LEN] = '\0';
}

int
events_insert(
    struct svc *s, const char *type, int64_t redemption_id, const char *payload)
{
	char id[EVENT_ID_LEN + 1];

	event_id(id);
	return db_exec(s->db, STMT_EVENT_INSERT, NULL, "ittnt", s->tenant_id,
	    id, type, redemption_id > 0 ? &redemption_id : NULL, payload);
}
