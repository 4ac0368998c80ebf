// Runs the built baton-cli as a child process for the end-to-end tests.
#pragma once

#include <QProcess>
#include <QProcessEnvironment>
#include <QStringList>

namespace baton::test {

struct CliRun {
    int exitCode = -1; // -1 when it crashed or did not finish
    QByteArray out, err;
};

// Waits for a started baton-cli (its standard input closed) and collects its output.
inline CliRun finish(QProcess& p, int timeoutMs = 240000) {
    p.closeWriteChannel();
    p.waitForFinished(timeoutMs);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

inline CliRun cli(const QStringList& args, int timeoutMs = 240000,
                  const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(BATON_CLI_PATH), args);
    return finish(p, timeoutMs);
}

} // namespace baton::test
