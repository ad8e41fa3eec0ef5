// Accesses to memory a framework allocator carved up: a copy, memset, collective or
// kernel argument recorded against an allocation (the allocator's segment)
// really touches the sub-allocations (tensor blocks) live at the place and
// time it was issued. This splits such accesses accordingly.
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/dvdg/graph.h"
#include "analyzer/dvdg/op_accesses.h"

namespace apptracer::dvdg {

// Rewrites each access of a copy, memset, kernel, collective or message to a location marked in
// `holds_blocks` into accesses of the blocks live when it was issued (its op's
// issue time; a collective's or message's access to a rank's buffer: that
// rank's call, on that rank's clock, in `rank_calls`):
//  * a byte range (copies, memsets) becomes one access per block it overlaps,
//    and one of the allocation itself per stretch no live block covers;
//  * a pointer (`to_end`: kernel arguments) inside a live block reaches from
//    the pointer to the block's end; outside every live block, to the next
//    live block, the allocation's end or the access's own end (one stride,
//    strided_pointers.h), whichever comes first. A block's end wins over a
//    stride: an allocator handing out blocks one after another can make
//    launches on different, larger tensors look like strides.
// Linear copies keep their position in the copied bytes (`positions`,
// parallel to `accesses`: see AccessPosition; -1: none). Accesses are
// rewritten in place and added at the end of `accesses`.
void split_by_blocks(std::vector<Access>& accesses, std::vector<int64_t>& positions,
                     const std::vector<Op>& ops,
                     const std::vector<Location>& locations, std::vector<Block> blocks,
                     const std::vector<bool>& holds_blocks, const std::vector<RankCall>& rank_calls);

}  // namespace apptracer::dvdg
