// Reads of the measurement tables: evaluations, benchmark rows and named comparisons, each
// optionally narrowed to one configuration, and the named configuration presets. Writes are in store.cpp with the others.
#include <utility>

#include "store/store_impl.h"

namespace workbench {

using store::Connection;
using store::Statement;

namespace {

Result<std::vector<RowId>> read_ids(Connection& conn, const char* sql, RowId key) {
    WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare(sql));
    stmt.bind(1, key);
    std::vector<RowId> ids;
    for (;;) {
        WB_ASSIGN_OR_RETURN(bool has_row, stmt.next());
        if (!has_row) break;
        ids.push_back(stmt.column_int(0));
    }
    return ids;
}

}  // namespace

Result<std::vector<EvaluationRecord>> Store::list_evaluations(RowId configuration_id) const {
    return impl_->read([&](Connection& conn) -> Result<std::vector<EvaluationRecord>> {
        WB_ASSIGN_OR_RETURN(Statement stmt,
                            conn.prepare("SELECT id, configuration_id, reference_configuration_id, text_name, "
                                         "text_sha256, n_tokens, perplexity, kl_mean, top1_agreement, json, "
                                         "created_unix_ms, retrieval_accuracy FROM evaluations WHERE ?1 = 0 OR configuration_id = ?1 "
                                         "ORDER BY created_unix_ms, id"));
        stmt.bind(1, configuration_id);
        std::vector<EvaluationRecord> evaluations;
        for (;;) {
            WB_ASSIGN_OR_RETURN(bool has_row, stmt.next());
            if (!has_row) break;
            EvaluationRecord e;
            e.id = stmt.column_int(0);
            e.configuration_id = stmt.column_int(1);
            e.reference_configuration_id = stmt.column_int(2);
            e.text_name = stmt.column_text(3);
            e.text_sha256 = stmt.column_text(4);
            e.n_tokens = static_cast<int32_t>(stmt.column_int(5));
            e.perplexity = stmt.column_optional(6);
            e.kl_mean = stmt.column_optional(7);
            e.top1_agreement = stmt.column_optional(8);
            e.json = stmt.column_text(9);
            e.created_unix_ms = stmt.column_int(10);
            e.retrieval_accuracy = stmt.column_optional(11);
            evaluations.push_back(std::move(e));
        }
        return evaluations;
    });
}

Result<std::vector<BenchmarkRecord>> Store::list_benchmarks(RowId configuration_id) const {
    return impl_->read([&](Connection& conn) -> Result<std::vector<BenchmarkRecord>> {
        WB_ASSIGN_OR_RETURN(Statement stmt,
                            conn.prepare("SELECT id, configuration_id, test_name, n_prompt, n_gen, n_batch, n_threads, "
                                         "avg_ts, stddev_ts, json, created_unix_ms FROM benchmarks "
                                         "WHERE ?1 = 0 OR configuration_id = ?1 ORDER BY created_unix_ms, id"));
        stmt.bind(1, configuration_id);
        std::vector<BenchmarkRecord> benchmarks;
        for (;;) {
            WB_ASSIGN_OR_RETURN(bool has_row, stmt.next());
            if (!has_row) break;
            BenchmarkRecord b;
            b.id = stmt.column_int(0);
            b.configuration_id = stmt.column_int(1);
            b.test_name = stmt.column_text(2);
            b.n_prompt = static_cast<int32_t>(stmt.column_int(3));
            b.n_gen = static_cast<int32_t>(stmt.column_int(4));
            b.n_batch = static_cast<int32_t>(stmt.column_int(5));
            b.n_threads = static_cast<int32_t>(stmt.column_int(6));
            b.avg_ts = stmt.column_double(7);
            b.stddev_ts = stmt.column_double(8);
            b.json = stmt.column_text(9);
            b.created_unix_ms = stmt.column_int(10);
            benchmarks.push_back(std::move(b));
        }
        return benchmarks;
    });
}

Result<std::vector<ComparisonRecord>> Store::list_comparisons() const {
    return impl_->read_snapshot([&](Connection& conn) -> Result<std::vector<ComparisonRecord>> {
        WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare("SELECT id, name, prompt, created_unix_ms FROM comparisons "
                                                         "ORDER BY created_unix_ms DESC, id DESC"));
        std::vector<ComparisonRecord> comparisons;
        for (;;) {
            WB_ASSIGN_OR_RETURN(bool has_row, stmt.next());
            if (!has_row) break;
            ComparisonRecord c;
            c.id = stmt.column_int(0);
            c.name = stmt.column_text(1);
            c.prompt = stmt.column_text(2);
            c.created_unix_ms = stmt.column_int(3);
            comparisons.push_back(std::move(c));
        }
        for (ComparisonRecord& c : comparisons) {
            WB_ASSIGN_OR_RETURN(c.configuration_ids,
                                read_ids(conn, "SELECT configuration_id FROM comparison_configurations "
                                               "WHERE comparison_id = ?1 ORDER BY position", c.id));
        }
        return comparisons;
    });
}

Result<ComparisonRecord> Store::load_comparison(RowId comparison_id) const {
    return impl_->read_snapshot([&](Connection& conn) -> Result<ComparisonRecord> {
        WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare("SELECT id, name, prompt, created_unix_ms FROM comparisons "
                                                         "WHERE id = ?1"));
        stmt.bind(1, comparison_id);
        WB_ASSIGN_OR_RETURN(bool found, stmt.next());
        if (!found) return error(StatusCode::not_found, conn.path() + ": no comparison " + std::to_string(comparison_id));
        ComparisonRecord c;
        c.id = stmt.column_int(0);
        c.name = stmt.column_text(1);
        c.prompt = stmt.column_text(2);
        c.created_unix_ms = stmt.column_int(3);
        WB_ASSIGN_OR_RETURN(c.configuration_ids,
                            read_ids(conn, "SELECT configuration_id FROM comparison_configurations "
                                           "WHERE comparison_id = ?1 ORDER BY position", c.id));
        WB_ASSIGN_OR_RETURN(Statement errors, conn.prepare("SELECT coalesce(error, '') FROM comparison_configurations "
                                                           "WHERE comparison_id = ?1 ORDER BY position"));
        errors.bind(1, c.id);
        for (;;) {
            WB_ASSIGN_OR_RETURN(bool has_row, errors.next());
            if (!has_row) break;
            c.errors.push_back(errors.column_text(0));
        }
        WB_ASSIGN_OR_RETURN(c.run_ids, read_ids(conn, "SELECT run_id FROM comparison_runs WHERE comparison_id = ?1 "
                                                      "ORDER BY run_id", c.id));
        return c;
    });
}

Result<std::vector<PresetRecord>> Store::list_presets() const {
    return impl_->read_snapshot([&](Connection& conn) -> Result<std::vector<PresetRecord>> {
        WB_ASSIGN_OR_RETURN(Statement stmt, conn.prepare("SELECT id, name, configuration_id, created_unix_ms "
                                                         "FROM presets ORDER BY name"));
        std::vector<PresetRecord> presets;
        for (;;) {
            WB_ASSIGN_OR_RETURN(bool has_row, stmt.next());
            if (!has_row) break;
            PresetRecord p;
            p.id = stmt.column_int(0);
            p.name = stmt.column_text(1);
            p.configuration_id = stmt.column_int(2);
            p.created_unix_ms = stmt.column_int(3);
            presets.push_back(std::move(p));
        }
        for (PresetRecord& p : presets) {
            WB_ASSIGN_OR_RETURN(p.configuration, store::read_configuration(conn, p.configuration_id));
        }
        return presets;
    });
}

}  // namespace workbench
