// Whether what a trace's schema holds under the names apptracer declares
// (tables.def) is what apptracer would have made there, checked from
// sqlite_master alone, before any of it is read. Reading a declared name runs
// whatever SQL the file put there: a view in place of a table can be a
// recursive query without end, a generated column can cost a second a row,
// a trigger can run anything when a command stores its results. So:
//   - a declared table must be an ordinary table (not a view, not a virtual
//     table) without generated columns;
//   - a declared view must be that view, word for word (as a trace or a
//     merged trace has it), or an ordinary table (older traces had tables
//     there);
//   - no trigger may be on a declared table or view.
// Names are compared as SQLite does, ignoring ASCII case. Objects under
// other names (a user's own tables and views) are never read, so allowed.
#pragma once

#include <string>

#include "apptracer/sqlite.h"

namespace apptracer {

// Throws TraceError naming `path` and the first object that is not what
// apptracer declares.
void check_schema_objects(Database& db, const std::string& path);

}  // namespace apptracer
