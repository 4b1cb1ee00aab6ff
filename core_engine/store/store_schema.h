// The history schema as a list of migrations: version k is the result of applying the first k
// in order, each in its own transaction with PRAGMA user_version. Tests build a file at every
// earlier version with migrate(conn, k) and check the current code upgrades it.
#pragma once

#include <cstdint>

#include "store/store_db.h"

namespace workbench::store {

// 'WBHS' in the file header: tells a history file from another application's SQLite file.
constexpr int32_t kApplicationId = 0x57424853;

int32_t current_schema_version();

// The file's schema version, 0 for a fresh file. Errors: an SQLite file of another application,
// a version newer than this build, or a file that is not a database at all.
Result<int32_t> history_version(Connection& conn);

// Upgrades the file to `target_version` (at most current_schema_version()). Errors: a file of
// another application, a version newer than this build, or the failing migration's SQL error
// (that migration is rolled back, earlier ones stay).
Status migrate(Connection& conn, int32_t target_version);

// Checks, without writing, that the file is a history file at exactly `expected_version`
// (a read-only store cannot upgrade it).
Status check_schema(Connection& conn, int32_t expected_version);

}  // namespace workbench::store
