// The command line of the Java benchmark programs: the fixed arguments their usage line
// names, then one or more workloads. Each argument is read by its name in the usage line, so
// that the line and the parsing cannot drift apart. javac finds this file beside the
// program's source (the benchmarks write it there too: conformance::peers::BENCH_ARGS).

import java.util.Arrays;
import java.util.List;

final class BenchArgs {
    private final List<String> names;
    private final String[] args;

    // Exits with status 2 and "usage: PROGRAM FIXED WORKLOADS" on stderr unless `args` hold
    // every argument `fixed` names (separated by spaces) and at least one workload.
    BenchArgs(String[] args, String program, String fixed, String workloads) {
        this.names = Arrays.asList(fixed.split(" "));
        if (args.length < names.size() + 1) {
            System.err.println("usage: " + program + " " + fixed + " " + workloads);
            System.exit(2);
        }
        this.args = args;
    }

    // The argument the usage line calls `name`.
    String text(String name) {
        int i = names.indexOf(name);
        if (i < 0) {
            throw new IllegalArgumentException("no argument " + name + " in the usage line");
        }
        return args[i];
    }

    double seconds(String name) {
        return Double.parseDouble(text(name));
    }

    int number(String name) {
        return Integer.parseInt(text(name));
    }

    // The workloads, in order, after the fixed arguments.
    List<String> workloads() {
        return Arrays.asList(args).subList(names.size(), args.length);
    }
}
