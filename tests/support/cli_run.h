// Runs the built baton-cli as a child process for the end-to-end tests.
#pragma once

#include <QProcess>
#include <QStringList>

namespace baton::test {

struct CliRun {
    int exitCode = -1; // -1 when it crashed or did not finish
    QByteArray out, err;
};

inline CliRun cli(const QStringList& args, int timeoutMs = 240000) {
    QProcess p;
    p.start(QStringLiteral(BATON_CLI_PATH), args);
    p.closeWriteChannel();
    p.waitForFinished(timeoutMs);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

} // namespace baton::test
