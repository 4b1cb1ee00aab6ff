// The store when things go wrong: a writer process SIGKILLed mid-write leaves a file that passes
// integrity_check and keeps every run it had reported done; a database locked by another
// connection, a read-only file, random bytes, damaged pages and a full database all give an error
// Status naming the file and the cause, and the store recovers or stays readable.
#include <QTest>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <thread>

#include "store_test_util.h"

using namespace workbench;
using namespace store_test;

namespace {

constexpr int kSamplesPerRun = 200;

// The child: complete runs one after another (samples, finish, assistant message, flush), each
// reported through `report_fd` once flushed, until it is killed.
[[noreturn]] void write_runs_until_killed(const std::string& path, int report_fd) {
    StoreOptions options;
    options.path = path;
    options.flush_interval_ms = 5;
    options.flush_max_items = 16;
    auto store = Store::open(options);
    if (!store.ok()) _exit(2);
    auto session_id = (*store)->create_session({});
    if (!session_id.ok()) _exit(3);
    for (;;) {
        auto run_id = (*store)->begin_run(make_run(*session_id, 0, kSamplesPerRun, 50.0));
        if (!run_id.ok()) _exit(4);
        for (int first = 0; first < kSamplesPerRun; first += 10) {
            (void)(*store)->append_samples(*run_id, make_samples(first, 10));
            usleep(200);
        }
        RunRecord done = make_run(*session_id, 0, kSamplesPerRun, 50.0);
        done.id = *run_id;
        (void)(*store)->finish_run(done);
        (void)(*store)->add_message({0, *session_id, *run_id, 0, "assistant", "run " + std::to_string(*run_id), 0});
        if (!(*store)->flush().ok()) _exit(5);
        const int64_t id = *run_id;
        if (write(report_fd, &id, sizeof id) != sizeof id) _exit(6);
    }
}

// Reads reported run ids until `n_wanted` have come or `timeout_ms` passes (0: what is there).
void read_reports(int fd, std::vector<int64_t>& ids, size_t n_wanted, int timeout_ms) {
    while (ids.size() < n_wanted || n_wanted == 0) {
        pollfd pfd{fd, POLLIN, 0};
        if (poll(&pfd, 1, timeout_ms) <= 0) return;
        int64_t id = 0;
        size_t got = 0;
        while (got < sizeof id) {
            const ssize_t n = read(fd, reinterpret_cast<char*>(&id) + got, sizeof id - got);
            if (n <= 0) return;  // the writer end closed
            got += static_cast<size_t>(n);
        }
        ids.push_back(id);
    }
}

void write_random_bytes(const std::string& path, std::streamoff offset, size_t n_bytes, uint32_t seed) {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    if (!file) file.open(path, std::ios::out | std::ios::binary);
    file.seekp(offset);
    std::mt19937 rng(seed);
    for (size_t i = 0; i < n_bytes; ++i) file.put(static_cast<char>(rng() & 0xff));
}

}  // namespace

class TestStoreFailures : public QObject {
    Q_OBJECT

    TempFiles files_;
    std::string new_path() { return files_.new_path(); }

private slots:
    void killed_writer_keeps_completed_runs() {
        const std::string path = new_path();
        int fds[2];
        QCOMPARE(pipe(fds), 0);
        const pid_t pid = fork();
        QVERIFY(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            write_runs_until_killed(path, fds[1]);
        }
        close(fds[1]);
        std::vector<int64_t> reported;
        read_reports(fds[0], reported, 3, 10'000);
        // Kill at a moment that varies from run to run, while samples are being written.
        std::this_thread::sleep_for(std::chrono::milliseconds(20 + std::random_device{}() % 60));
        kill(pid, SIGKILL);
        int wait_status = 0;
        waitpid(pid, &wait_status, 0);
        read_reports(fds[0], reported, 0, 0);
        close(fds[0]);
        QVERIFY2(WIFSIGNALED(wait_status), qPrintable(QString("child exited with %1 instead of being killed")
                                                          .arg(WEXITSTATUS(wait_status))));
        QVERIFY2(reported.size() >= 3, qPrintable(QString("only %1 runs reported").arg(reported.size())));

        {
            RawDb raw(path);
            QCOMPARE(q(raw.text("PRAGMA integrity_check")), QString("ok"));
            QCOMPARE(raw.exec("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)"), SQLITE_OK);
        }
        {
            // What the kill cut short: the run in progress, with whatever of its samples had committed.
            RawDb raw(path);
            qInfo("killed after %zu reported runs; %lld unfinished run(s) with %lld committed samples",
                  reported.size(), raw.count("SELECT count(*) FROM runs WHERE finished_unix_ms = 0"),
                  raw.count("SELECT count(*) FROM metric_samples WHERE run_id IN "
                            "(SELECT id FROM runs WHERE finished_unix_ms = 0)"));
        }
        auto store = open(path);
        QVERIFY(store);
        for (const int64_t run_id : reported) {
            auto run = store->load_run(run_id);
            WB_VERIFY_OK(run);
            QVERIFY(run->finished_unix_ms != 0);
            QCOMPARE(run->n_tokens_generated, kSamplesPerRun);
            QCOMPARE(store->load_samples(run_id)->size(), size_t(kSamplesPerRun));
        }
        auto messages = store->load_messages(1);
        WB_VERIFY_OK(messages);
        QVERIFY(messages->size() >= reported.size());
        // The store writes on after the crash.
        WB_VERIFY_OK(store->create_session({}));
    }

    void locked_database_fails_clearly_and_recovers() {
        const std::string path = new_path();
        StoreOptions options;
        options.path = path;
        options.busy_timeout_ms = 150;
        auto store = Store::open(options);
        WB_VERIFY_OK(store);
        auto session_id = (*store)->create_session({});
        WB_VERIFY_OK(session_id);

        RawDb other(path);
        QCOMPARE(other.exec("BEGIN EXCLUSIVE"), SQLITE_OK);
        auto blocked = (*store)->create_session({});
        QVERIFY(!blocked.ok());
        const QString message = q(blocked.status().message());
        QVERIFY2(message.startsWith(q(path) + ": database is locked"), qPrintable(message));
        QVERIFY2(message.contains("SQLITE_BUSY after 150 ms"), qPrintable(message));
        WB_VERIFY_OK((*store)->add_message({0, *session_id, 0, 0, "user", "while locked", 0}));
        const Status flushed = (*store)->flush();
        QVERIFY(!flushed.ok());
        QVERIFY2(q(flushed.message()).contains("1 queued write was dropped"), flushed.message().c_str());
        QVERIFY(!(*store)->last_error().ok());
        WB_VERIFY_OK((*store)->list_sessions());  // readers are not blocked by a writer in WAL mode

        QCOMPARE(other.exec("COMMIT"), SQLITE_OK);
        WB_VERIFY_OK((*store)->create_session({}));
        WB_VERIFY_OK((*store)->add_message({0, *session_id, 0, 0, "user", "after unlock", 0}));
        WB_VERIFY_OK((*store)->flush());
        QCOMPARE((*store)->load_messages(*session_id)->size(), size_t(1));
    }

    void opening_a_locked_file_fails_clearly() {
        const std::string path = new_path();
        RawDb other(path);  // a fresh file, held by a rollback-journal writer
        QCOMPARE(other.exec("BEGIN EXCLUSIVE; CREATE TABLE t (x);"), SQLITE_OK);
        StoreOptions options;
        options.path = path;
        options.busy_timeout_ms = 100;
        auto store = Store::open(options);
        QVERIFY(!store.ok());
        QVERIFY2(q(store.status().message()).contains("locked"), store.status().message().c_str());
        QCOMPARE(other.exec("ROLLBACK"), SQLITE_OK);
        WB_VERIFY_OK(Store::open(options));
    }

    void read_only_file() {
        const std::string path = new_path();
        { QVERIFY(open(path)); }
        QCOMPARE(chmod(path.c_str(), 0444), 0);
        if (geteuid() == 0) {
            chmod(path.c_str(), 0644);
            QSKIP("running as root: chmod 0444 does not stop root from writing (read_only stores are tested in test_store)");
        }
        StoreOptions options;
        options.path = path;
        auto store = Store::open(options);
        QVERIFY(!store.ok());
        QVERIFY2(q(store.status().message()).contains("read-only"), store.status().message().c_str());
        options.read_only = true;
        WB_VERIFY_OK(Store::open(options));
        chmod(path.c_str(), 0644);
    }

    void random_bytes_are_not_a_database() {
        const std::string path = new_path();
        write_random_bytes(path, 0, 64 * 1024, 7);
        StoreOptions options;
        options.path = path;
        auto store = Store::open(options);
        QVERIFY(!store.ok());
        QCOMPARE(store.status().code(), StatusCode::invalid_file);
        QVERIFY2(q(store.status().message()).startsWith(q(path) + ": not an SQLite database"),
                 store.status().message().c_str());
        options.read_only = true;
        QVERIFY(!Store::open(options).ok());
        options.path = files_.new_path() + "/no/such/folder/history.db";
        options.read_only = false;
        store = Store::open(options);
        QVERIFY(!store.ok());
        QVERIFY2(q(store.status().message()).contains("cannot open"), store.status().message().c_str());
    }

    void damaged_pages_give_errors_not_crashes() {
        const std::string path = new_path();
        {
            auto store = open(path);
            QVERIFY(store);
            auto session_id = store->create_session({});
            WB_VERIFY_OK(session_id);
            for (int i = 0; i < 200; ++i)
                WB_VERIFY_OK(store->add_message({0, *session_id, 0, 0, "user", std::string(300, 'a' + i % 26), 0}));
            WB_VERIFY_OK(store->flush());
        }
        // Keep the header page, scramble the rest: tables and indexes now point at garbage.
        write_random_bytes(path, 4096, 12 * 4096, 11);
        StoreOptions options;
        options.path = path;
        auto store = Store::open(options);
        if (!store.ok()) {
            QVERIFY2(q(store.status().message()).startsWith(q(path) + ":"), store.status().message().c_str());
            return;
        }
        // Opened (the schema page may have survived): reads fail with a Status, or return rows.
        for (int i = 0; i < 3; ++i) {
            auto sessions = (*store)->list_sessions();
            auto messages = (*store)->load_messages(1);
            if (!messages.ok()) QVERIFY2(q(messages.status().message()).startsWith(q(path)), messages.status().message().c_str());
            if (!sessions.ok()) QVERIFY2(q(sessions.status().message()).startsWith(q(path)), sessions.status().message().c_str());
        }
        (void)(*store)->add_message({0, 1, 0, 0, "user", "into the damage", 0});
        (void)(*store)->flush();
    }

    void full_database_fails_writes_and_keeps_reads() {
        const std::string path = new_path();
        StoreOptions options;
        options.path = path;
        options.max_page_count = 60;  // a few dozen pages past the schema: a tiny "disk"
        auto opened = Store::open(options);
        WB_VERIFY_OK(opened);
        Store& store = **opened;
        auto session_id = store.create_session({0, 0, "before full", 0, 0});
        WB_VERIFY_OK(session_id);
        WB_VERIFY_OK(store.add_message({0, *session_id, 0, 0, "user", "kept message", 0}));
        WB_VERIFY_OK(store.flush());
        Status failure;
        for (int i = 0; i < 200 && failure.ok(); ++i) {
            WB_VERIFY_OK(store.add_message({0, *session_id, 0, 0, "assistant", std::string(2000, 'x'), 0}));
            failure = store.flush();
        }
        QVERIFY2(!failure.ok(), "200 messages of 2 KB fit in 60 pages?");
        QCOMPARE(failure.code(), StatusCode::resource_exhausted);
        QVERIFY2(q(failure.message()).startsWith(q(path) + ": database or disk is full (SQLITE_FULL)"),
                 failure.message().c_str());
        QCOMPARE(store.last_error().code(), StatusCode::resource_exhausted);
        // Reads still work and what was committed is intact.
        auto messages = store.load_messages(*session_id);
        WB_VERIFY_OK(messages);
        QVERIFY(messages->size() >= 1);
        QCOMPARE(q((*messages)[0].text), QString("kept message"));
        auto sessions = store.list_sessions();
        WB_VERIFY_OK(sessions);
        QCOMPARE(q((*sessions)[0].title), QString("before full"));
        // Writes keep failing cleanly rather than crashing.
        WB_VERIFY_OK(store.add_message({0, *session_id, 0, 0, "assistant", std::string(20000, 'y'), 0}));
        QVERIFY(!store.flush().ok());
        RawDb raw(path);
        QCOMPARE(q(raw.text("PRAGMA integrity_check")), QString("ok"));
    }
};

QTEST_APPLESS_MAIN(TestStoreFailures)
#include "test_store_failures.moc"
