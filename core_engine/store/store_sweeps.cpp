// Sweeps in the session database: a record per sweep and its rows in the order measured (writes
// through the writer thread like every other table; reads on the read connection).
#include <utility>

#include "store/store_impl.h"
#include "store/store_text.h"

namespace workbench {

using store::Connection;
using store::Statement;
using store::while_doing;

namespace {

constexpr const char* kSweepColumns =
    "SELECT s.id, s.name, s.model, s.source, s.settings, s.created_unix_ms, "
    "(SELECT count(*) FROM sweep_rows r WHERE r.sweep_id = s.id), "
    "(SELECT count(*) FROM sweep_rows r WHERE r.sweep_id = s.id AND (NOT json_valid(r.json) OR coalesce(json_extract(r.json, '$.status'), '') <> 'ok')) "
    "FROM sweeps s ";

SweepRecord read_sweep_row(const Statement& stmt) {
    SweepRecord s;
    s.id = stmt.column_int(0);
    s.name = stmt.column_text(1);
    s.model = stmt.column_text(2);
    s.source = stmt.column_text(3);
    s.settings = stmt.column_text(4);
    s.created_unix_ms = stmt.column_int(5);
    s.n_rows = static_cast<int32_t>(stmt.column_int(6));
    s.n_failed = static_cast<int32_t>(stmt.column_int(7));
    return s;
}

}  // namespace

Result<RowId> Store::create_sweep(const SweepRecord& sweep) {
    if (!impl_->writer) return impl_->read_only_error();
    const int64_t created = sweep.created_unix_ms != 0 ? sweep.created_unix_ms : store::now_unix_ms();
    return impl_->writer->call([s = sweep, created](Connection& conn) -> Result<int64_t> {
        WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare("INSERT INTO sweeps (name, model, source, settings, created_unix_ms) "
                                                         "VALUES (?1, ?2, ?3, ?4, ?5)"));
        stmt.bind(1, s.name).bind(2, s.model).bind(3, s.source).bind(4, s.settings).bind(5, created);
        WB_RETURN_IF_ERROR(while_doing(stmt.run(), "saving a sweep"));
        return conn.last_insert_id();
    });
}

Status Store::delete_sweep(RowId sweep_id) {
    if (!impl_->writer) return impl_->read_only_error();
    return impl_->writer
        ->call([sweep_id](Connection& conn) -> Result<int64_t> {
            WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare("DELETE FROM sweeps WHERE id = ?1"));
            stmt.bind(1, sweep_id);
            WB_RETURN_IF_ERROR(while_doing(stmt.run(), "deleting sweep " + std::to_string(sweep_id)));
            if (conn.changes() == 0) return error(StatusCode::not_found, conn.path() + ": no sweep " + std::to_string(sweep_id));
            return sweep_id;
        })
        .status();
}

Status Store::add_sweep_row(RowId sweep_id, RowId evaluation_id, std::string json) {
    if (!impl_->writer) return impl_->read_only_error();
    impl_->writer->post([sweep_id, evaluation_id, json = std::move(json)](Connection& conn) -> Result<int64_t> {
        WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare("INSERT INTO sweep_rows (sweep_id, position, evaluation_id, json) "
                                                         "VALUES (?1, (SELECT coalesce(max(position), -1) + 1 FROM sweep_rows "
                                                         "WHERE sweep_id = ?1), ?2, ?3)"));
        stmt.bind(1, sweep_id).bind_id(2, evaluation_id).bind(3, json);
        WB_RETURN_IF_ERROR(while_doing(stmt.run(), "adding a row to sweep " + std::to_string(sweep_id)));
        return sweep_id;
    });
    return Status::ok_status();
}

Result<std::vector<SweepRecord>> Store::list_sweeps() const {
    return impl_->read_snapshot([&](Connection& conn) -> Result<std::vector<SweepRecord>> {
        WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare(std::string(kSweepColumns) + "ORDER BY s.created_unix_ms DESC, s.id DESC"));
        std::vector<SweepRecord> sweeps;
        for (;;) {
            WB_ASSIGN_OR_RETURN(bool has_row, stmt.next());
            if (!has_row) break;
            sweeps.push_back(read_sweep_row(stmt));
        }
        return sweeps;
    });
}

Result<SweepRecord> Store::load_sweep(RowId sweep_id) const {
    return impl_->read_snapshot([&](Connection& conn) -> Result<SweepRecord> {
        WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare(std::string(kSweepColumns) + "WHERE s.id = ?1"));
        stmt.bind(1, sweep_id);
        WB_ASSIGN_OR_RETURN(bool found, stmt.next());
        if (!found) return error(StatusCode::not_found, conn.path() + ": no sweep " + std::to_string(sweep_id));
        SweepRecord s = read_sweep_row(stmt);
        WB_ASSIGN_OR_RETURN(Statement rows, conn.prepare("SELECT json FROM sweep_rows WHERE sweep_id = ?1 ORDER BY position"));
        rows.bind(1, sweep_id);
        for (;;) {
            WB_ASSIGN_OR_RETURN(bool has_row, rows.next());
            if (!has_row) break;
            s.rows.push_back(rows.column_text(0));
        }
        return s;
    });
}

}  // namespace workbench
