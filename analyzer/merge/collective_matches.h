// The cross-rank join of `apptracer merge`: which `collectives` rows of the
// merged processes are one operation (tables.def, collective_matches).
//   collectives: the rows of one communicator (library, comm_id) with the same
//     seq, from at least two ranks;
//   point to point: a Send and the Recv with the same communicator, sender,
//     receiver, tag (MPI) and seq (the k-th message of that pair).
// One match_id per operation, rows listed once: storage grows with ranks,
// not with their square.
#pragma once

#include <cstdint>

#include "apptracer/sqlite.h"

namespace apptracer {

// Fills collective_matches of a merged trace; returns the operations matched.
int64_t match_collectives(Database& merged);

}  // namespace apptracer
