#include "recurrence_options.h"

namespace baton::cli {

void addRecurrenceOptions(Args& args) {
    args.option("insert-block", "N", "Recurrent: the block that receives the state", "1")
        .option("ffn-width", "N", "Recurrent: the state FFN's hidden width", "200")
        .option("ffn-depth", "N", "Recurrent: the state FFN's hidden layers", "3")
        .flag("plain-ffn", "Recurrent: the paper's h_prev = FFN(z) instead of the residual "
                           "z + FFN(z) with a zero-initialised last layer")
        .flag("slot-bias", "Recurrent: a learned per-head logit bias on the state slot")
        .option("slots", "S",
                "Recurrent: state slots, each pooled from its own segment of the window and "
                "entering as its own key and value",
                "1")
        .option("pool-last", "K",
                "Recurrent: pool only the last K positions of each window (0: all)", "0")
        .flag("sink", "Recurrent: a learned per-head attention sink beside the state slots")
        .option("read-blocks", "N",
                "Recurrent: the state is read by N blocks from --insert-block on (each with "
                "its own keys and values of it)",
                "1")
        .flag("write-tokens",
              "Recurrent: the next state is written by --slots learned write tokens run after "
              "each window's last token (RMT's written memory) instead of pooled")
        .flag("gate", "Recurrent: a learned gate between the previous state and the new one")
        .flag("memory-tokens",
              "Recurrent: the state read as memory tokens (RMT's read memory): its slots pass "
              "through the --read-blocks blocks as tokens of their own, each block reading "
              "their pass through the blocks before it");
}

engine::RecurrenceConfig recurrenceFromArgs(const Args& args) {
    engine::RecurrenceConfig r;
    r.insertBlock = int(args.getInt("insert-block", 0, 10000));
    r.ffnWidth = int(args.getInt("ffn-width", 1, 1000000));
    r.ffnDepth = int(args.getInt("ffn-depth", 0, 1000));
    r.residual = !args.has("plain-ffn");
    r.slotBias = args.has("slot-bias");
    r.slots = int(args.getInt("slots", 1, 64));
    r.poolLast = int(args.getInt("pool-last", 0, 65536));
    r.sink = args.has("sink");
    r.readBlocks = int(args.getInt("read-blocks", 1, 10000));
    r.writeTokens = args.has("write-tokens");
    r.gate = args.has("gate");
    r.memoryTokens = args.has("memory-tokens");
    return r;
}

} // namespace baton::cli
