"""The Python module against the command line: the same scenarios give the same objects as
`pipetwin ... --json`, errors carry the command line's messages, files are the same bytes.

Run by ctest with PYTHONPATH=build/python, PIPETWIN_BINARY and PIPETWIN_SOURCE_DIR set;
`python3 pipetwin_module_test.py ClassName` runs one class."""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import threading
import types
import unittest

import pipetwin

BINARY = os.environ["PIPETWIN_BINARY"]
SOURCE = os.environ["PIPETWIN_SOURCE_DIR"]


def cli(*args):
    """(exit code, stdout, stderr) of the pipetwin binary."""
    run = subprocess.run([BINARY, *args], capture_output=True, text=True, check=False)
    return run.returncode, run.stdout, run.stderr


def cli_json(*args):
    code, out, err = cli(*args, "--json")
    assert code == 0, err
    return json.loads(out)


def scenario_file(name):
    return os.path.join(SOURCE, "scenarios", name)


# The shipped scenarios that simulate in about a second, each on both engines (the
# cluster-sized ones take minutes; gpt-8gpu-gpipe runs out of memory, see Errors).
SHIPPED = ["alexnet-pipedream-4gpu", "freezepipe-resnet18-cifar10", "freezepipe-vgg16-cifar10",
           "gnmt-pipedream-8gpu", "gpt-8gpu-1f1b", "gpt-cpu-2rank", "gpt-tp2-pp2-cpu",
           "mlp-cpu-2rank", "moe-ep2-pp2-cpu", "offload-gpt-a100", "offload-vgg16-a100",
           "quickstart", "resnet18-cpu-2rank", "resnet50-pipedream-16gpu", "umpipe-gpt1-14",
           "umpipe-synthetic", "umpipe-vgg16", "uniform", "vgg16-cpu-2rank",
           "vgg16-pipedream-4gpu", "whatif-nvlink-vs-pcie"]


def hide_pandas(test):
    """Makes `import pandas` fail for the rest of `test`, whether pandas is installed or not."""
    saved = sys.modules.get("pandas", False)
    sys.modules["pandas"] = None  # an import of a module set to None raises ImportError

    def restore():
        if saved is False:
            del sys.modules["pandas"]
        else:
            sys.modules["pandas"] = saved
    test.addCleanup(restore)


class WithoutPandas(unittest.TestCase):
    """Tests of the values themselves, in the plain lists and columns that the command line's
    JSON also gives (Frames tests the DataFrames)."""

    def setUp(self):
        hide_pandas(self)


class Simulate(WithoutPandas):
    def test_shipped_scenarios_equal_the_cli_json(self):
        for name in SHIPPED:
            for engine in ("analytic", "simgrid"):
                with self.subTest(scenario=name, engine=engine):
                    path = scenario_file(name + ".textproto")
                    result = pipetwin.simulate(pipetwin.load(path), engine=engine)
                    self.assertEqual(result.to_dict(),
                                     cli_json("simulate", path, "--engine", engine))

    def test_builtin_quickstart_one_liner(self):
        # The README's one-liner.
        time = pipetwin.simulate(pipetwin.load("builtin:quickstart")).iteration_time_s
        self.assertEqual(time, cli_json("simulate", "builtin:quickstart")["iteration_time_s"])
        # No scenario is the built-in quickstart, as on the command line.
        self.assertEqual(pipetwin.simulate(pipetwin.load()).iteration_time_s, time)

    def test_overrides_equal_set(self):
        scenario = pipetwin.load("builtin:quickstart",
                                 set={"schedule.kind": "GPIPE", "training.microbatches": 8})
        self.assertEqual(scenario.overrides, ["schedule.kind=GPIPE", "training.microbatches=8"])
        self.assertEqual(scenario.schedule["kind"], "GPIPE")
        self.assertEqual(scenario.training["microbatches"], 8)
        self.assertEqual(
            pipetwin.simulate(scenario).to_dict(),
            cli_json("simulate", "builtin:quickstart", "--set", "schedule.kind=GPIPE",
                     "--set", "training.microbatches=8"))
        again = pipetwin.load("builtin:quickstart").with_set({"schedule.kind": "GPIPE"})
        self.assertEqual(again.schedule["kind"], "GPIPE")

    def test_fields_read_as_attributes(self):
        scenario = pipetwin.load("builtin:quickstart")
        self.assertEqual(scenario.name, "quickstart")
        self.assertEqual(scenario.to_dict()["schedule"]["stages"], 4)
        self.assertIn("model", dir(scenario))
        with self.assertRaises(AttributeError):
            scenario.no_such_field
        result = pipetwin.simulate(scenario)
        self.assertEqual(len(result.devices), 4)
        with self.assertRaises(AttributeError):
            result.no_such_field

    def test_spans_are_columns_of_the_timeline(self):
        result = pipetwin.simulate(pipetwin.load("builtin:quickstart"))
        spans = result.spans
        count = len(spans["start_s"])
        self.assertGreater(count, 0)
        for column in ("device", "lane", "name", "op", "stage", "microbatch", "range_lo",
                       "range_hi", "iteration", "start_s", "end_s", "bytes", "peer_device"):
            self.assertEqual(len(spans[column]), count, column)
        self.assertEqual(max(spans["end_s"]), result.training_time_s)
        self.assertEqual(sorted(set(spans["device"])), [0, 1, 2, 3])
        self.assertIn("FWD", set(spans["op"]))

    def test_trace_and_timeline_files_equal_the_cli(self):
        result = pipetwin.simulate(pipetwin.load("builtin:quickstart"))
        with tempfile.TemporaryDirectory() as tmp:
            ours, theirs = os.path.join(tmp, "py.json"), os.path.join(tmp, "cli.json")
            ours_tl, theirs_tl = os.path.join(tmp, "py.tl"), os.path.join(tmp, "cli.tl")
            result.write_trace(ours)
            result.write_timeline(ours_tl)
            code, _, err = cli("simulate", "builtin:quickstart", "--trace", theirs,
                               "--timeline", theirs_tl)
            self.assertEqual(code, 0, err)
            for a, b in ((ours, theirs), (ours_tl, theirs_tl)):
                with open(a, "rb") as fa, open(b, "rb") as fb:
                    self.assertEqual(fa.read(), fb.read())

    def test_simulations_run_on_threads(self):
        # The GIL is released while simulating: threads each get their own result.
        results = {}

        def run(kind):
            scenario = pipetwin.load("builtin:quickstart", set={"schedule.kind": kind})
            results[kind] = pipetwin.simulate(scenario, engine="simgrid").iteration_time_s

        threads = [threading.Thread(target=run, args=(k,)) for k in ("GPIPE", "ONE_F_ONE_B")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for kind, time in results.items():
            self.assertEqual(time, cli_json("simulate", "builtin:quickstart", "--engine",
                                            "simgrid", "--set", "schedule.kind=" + kind)
                             ["iteration_time_s"])
        self.assertEqual(len(results), 2)


class Errors(unittest.TestCase):
    def assert_same_error(self, call, *cli_args):
        code, _, err = cli(*cli_args)
        with self.assertRaises(pipetwin.InputError) as caught:
            call()
        self.assertEqual(code, 2)
        self.assertEqual("error: " + str(caught.exception) + "\n", err)
        self.assertIsInstance(caught.exception, ValueError)

    def test_bad_field_in_a_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bad.textproto")
            with open(path, "w") as f:
                f.write('name: "bad"\nmodel { zoo: "gpt2" }\nschedule { kind: ONE_F_ONE_B stages: -3 }\n')
            self.assert_same_error(lambda: pipetwin.simulate(pipetwin.load(path)), "simulate", path)

    def test_bad_override(self):
        self.assert_same_error(lambda: pipetwin.load("builtin:quickstart", set={"schedule.stagez": 2}),
                               "simulate", "builtin:quickstart", "--set", "schedule.stagez=2")

    def test_missing_file_and_builtin(self):
        self.assert_same_error(lambda: pipetwin.load("/no/such.textproto"), "simulate",
                               "/no/such.textproto")
        self.assert_same_error(lambda: pipetwin.load("builtin:nope"), "simulate", "builtin:nope")

    def test_bad_engine(self):
        self.assert_same_error(
            lambda: pipetwin.simulate(pipetwin.load("builtin:quickstart"), engine="warp"),
            "simulate", "builtin:quickstart", "--engine", "warp")

    def test_out_of_memory_is_a_runtime_failure(self):
        path = scenario_file("gpt-8gpu-gpipe.textproto")
        code, _, err = cli("simulate", path)
        with self.assertRaises(pipetwin.RuntimeFailure) as caught:
            pipetwin.simulate(pipetwin.load(path))
        self.assertEqual(code, 1)
        self.assertEqual("error: " + str(caught.exception) + "\n", err)
        self.assertIsInstance(caught.exception, RuntimeError)
        allowed = pipetwin.simulate(pipetwin.load(path), allow_oom=True)
        self.assertTrue(allowed.out_of_memory)
        self.assertEqual(allowed.to_dict(), cli_json("simulate", path, "--allow-oom"))


class Studies(WithoutPandas):
    def test_sweep_equals_the_cli_sweep(self):
        scenario = pipetwin.load("builtin:quickstart", set={"training.microbatches": 8})
        rows = pipetwin.sweep(scenario, vary={"schedule.kind": ["GPIPE", "ONE_F_ONE_B"],
                                              "schedule.stages": [2, 4]}, jobs=2)
        self.assertEqual(len(rows), 4)
        self.assertEqual(rows, cli_json("sweep", "builtin:quickstart", "--set",
                                        "training.microbatches=8", "--vary",
                                        "schedule.kind=GPIPE,ONE_F_ONE_B", "--vary",
                                        "schedule.stages=2,4", "-j", "2"))

    def test_sweep_on_simgrid(self):
        scenario = pipetwin.load("builtin:quickstart")
        rows = pipetwin.sweep(scenario, vary={"training.microbatches": [4, 8]}, engine="simgrid")
        self.assertEqual(rows, cli_json("sweep", "builtin:quickstart", "--vary",
                                        "training.microbatches=4,8", "--engine", "simgrid"))

    def test_sweep_errors_name_the_point(self):
        code, _, err = cli("sweep", "builtin:quickstart", "--vary", "schedule.stages=2,0")
        with self.assertRaises(pipetwin.InputError) as caught:
            pipetwin.sweep(pipetwin.load("builtin:quickstart"), vary={"schedule.stages": [2, 0]})
        self.assertEqual(code, 2)
        self.assertEqual("error: " + str(caught.exception) + "\n", err)

    def test_goodput_equals_the_cli_goodput(self):
        scenario = pipetwin.load("builtin:llama3-8b-64gpu", set={"run.gpu_hour_cost": 2})
        ours = pipetwin.goodput(scenario, tokens=1e12, monte_carlo=500, seed=3)
        self.assertEqual(ours, cli_json("goodput", "builtin:llama3-8b-64gpu", "--set",
                                        "run.gpu_hour_cost=2", "--tokens", "1e12",
                                        "--monte-carlo", "500", "--seed", "3"))
        self.assertGreater(ours["ettr"], 0.5)
        self.assertAlmostEqual(ours["cost"], 2 * ours["gpu_hours"])

    def test_whatif_equals_the_cli_whatif(self):
        data = os.path.join(SOURCE, "tests", "data", "straggler-analysis")
        trace = os.path.join(data, "timeline-ST.json.gz")
        meta = os.path.join(data, "meta-ST.yaml")
        ours = pipetwin.whatif(trace, meta)
        self.assertEqual(ours, cli_json("whatif", trace, "--meta", meta))
        self.assertAlmostEqual(ours["slowdown"], 1.179, delta=0.02 * 1.179)

    def test_straggler_equals_the_cli_straggler(self):
        scenario = pipetwin.load("builtin:gpt-8gpu-1f1b")
        ours = pipetwin.straggler(scenario, factors=[0.5], devices="0-1,7")
        self.assertEqual(ours, cli_json("straggler", "builtin:gpt-8gpu-1f1b", "--factor", "0.5",
                                        "--devices", "0-1,7"))
        self.assertEqual(len(ours["points"]), 3)

    def test_plan_equals_the_cli_plan(self):
        args = ["--population", "8", "--generations", "3", "--seed", "5", "--threads", "1"]
        ours = pipetwin.plan(pipetwin.load("builtin:quickstart"), search="umpipe", population=8,
                             generations=3, seed=5, threads=1)
        theirs = cli_json("plan", "builtin:quickstart", "--search", "umpipe", *args)
        for wall_clock in (ours, theirs):
            del wall_clock["search_wall_s"]
        self.assertEqual(ours, theirs)

    def test_tune_equals_the_cli_tune(self):
        fix = ["microbatch_size=1,2", "training.zero_stage=0"]
        ours = pipetwin.tune(pipetwin.load("builtin:gpt-8gpu-1f1b"), fix=fix, refine=3)
        theirs = cli_json("tune", "builtin:gpt-8gpu-1f1b", "--fix", fix[0], "--fix", fix[1],
                          "--refine", "3")
        for wall_clock in (ours, theirs):
            del wall_clock["wall_s"]
        self.assertEqual(ours, theirs)
        self.assertLessEqual(ours["best"]["iteration_time_s"], ours["own"]["iteration_time_s"])
        with self.assertRaises(pipetwin.InputError):
            pipetwin.tune(pipetwin.load("builtin:gpt-8gpu-1f1b"), fix=["schedule.stagse=2"])

    def test_compare_equals_the_cli_compare(self):
        with tempfile.TemporaryDirectory() as tmp:
            a, b = os.path.join(tmp, "a.tl"), os.path.join(tmp, "b.tl")
            pipetwin.simulate(pipetwin.load("builtin:quickstart")).write_timeline(a)
            pipetwin.simulate(pipetwin.load("builtin:quickstart"), engine="simgrid").write_timeline(b)
            self.assertEqual(pipetwin.compare(a, b), cli_json("compare", a, b))
        analytic = pipetwin.simulate(pipetwin.load("builtin:quickstart"))
        simgrid = pipetwin.simulate(pipetwin.load("builtin:quickstart"), engine="simgrid")
        report = pipetwin.compare(analytic, simgrid, labels=("analytic", "simgrid"))
        self.assertEqual(report["a"], "analytic")
        self.assertEqual(report["makespan_a_s"], analytic.training_time_s)
        self.assertEqual(report["makespan_b_s"], simgrid.training_time_s)


class Chakra(unittest.TestCase):
    SET = ["cluster.gpus_per_node=8", "training.data_parallel=2"]

    def test_exported_traces_equal_the_cli_export(self):
        with tempfile.TemporaryDirectory() as tmp:
            ours, theirs = os.path.join(tmp, "py"), os.path.join(tmp, "cli")
            files = pipetwin.export_chakra(pipetwin.load("builtin:quickstart", set=self.SET), ours)
            self.assertEqual(files, [os.path.join(ours, "pipetwin.%d.et" % r) for r in range(8)])
            args = [a for s in self.SET for a in ("--set", s)]
            code, _, err = cli("export", "chakra", "builtin:quickstart", *args, "-o", theirs)
            self.assertEqual(code, 0, err)
            for name in sorted(os.listdir(theirs)):
                with open(os.path.join(ours, name), "rb") as a, \
                        open(os.path.join(theirs, name), "rb") as b:
                    self.assertEqual(a.read(), b.read(), name)

    def test_simulated_traces_equal_the_cli_and_the_scenario(self):
        scenario = pipetwin.load("builtin:quickstart", set=self.SET)
        with tempfile.TemporaryDirectory() as tmp:
            pipetwin.export_chakra(scenario, tmp)
            for engine in ("analytic", "simgrid"):
                with self.subTest(engine=engine):
                    replayed = pipetwin.simulate_chakra(tmp, engine=engine)
                    self.assertEqual(replayed.to_dict(),
                                     cli_json("simulate", "--chakra", tmp, "--engine", engine))
                    self.assertEqual(replayed.iteration_time_s,
                                     pipetwin.simulate(scenario, engine=engine).iteration_time_s)

    def test_bad_directory_is_an_input_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            missing = os.path.join(tmp, "none")
            code, _, err = cli("simulate", "--chakra", missing)
            with self.assertRaises(pipetwin.InputError) as caught:
                pipetwin.simulate_chakra(missing)
            self.assertEqual(code, 2)
            self.assertEqual("error: " + str(caught.exception) + "\n", err)


class StandInDataFrame:
    """What the package hands pandas.DataFrame, kept for the test to read."""

    def __init__(self, data):
        self.data = data


class Frames(unittest.TestCase):
    """sweep() and Result.spans: pandas DataFrames when pandas imports, lists otherwise."""

    VARY = {"schedule.kind": ["GPIPE", "ONE_F_ONE_B"], "schedule.stages": [2, 4]}
    CLI_VARY = ["--vary", "schedule.kind=GPIPE,ONE_F_ONE_B", "--vary", "schedule.stages=2,4"]

    def use_stand_in_pandas(self):
        hide_pandas(self)  # restores the real module (or its absence) afterwards
        sys.modules["pandas"] = types.SimpleNamespace(DataFrame=StandInDataFrame)

    def test_without_pandas_sweep_is_the_cli_rows(self):
        hide_pandas(self)
        rows = pipetwin.sweep(pipetwin.load("builtin:quickstart"), vary=self.VARY)
        self.assertIsInstance(rows, list)
        self.assertEqual(rows, cli_json("sweep", "builtin:quickstart", *self.CLI_VARY))

    def test_without_pandas_spans_are_a_dict_of_columns(self):
        hide_pandas(self)
        spans = pipetwin.simulate(pipetwin.load("builtin:quickstart")).spans
        self.assertIsInstance(spans, dict)
        self.assertEqual(sorted(spans), sorted(
            ["device", "lane", "name", "op", "stage", "microbatch", "range_lo", "range_hi",
             "iteration", "start_s", "end_s", "bytes", "peer_device"]))

    def test_with_pandas_sweep_has_a_column_per_varied_path(self):
        self.use_stand_in_pandas()
        frame = pipetwin.sweep(pipetwin.load("builtin:quickstart"), vary=self.VARY)
        self.assertIsInstance(frame, StandInDataFrame)
        rows = cli_json("sweep", "builtin:quickstart", *self.CLI_VARY)
        self.assertEqual(len(frame.data), 4)
        for record, row in zip(frame.data, rows):
            point = row.pop("point")
            self.assertEqual(list(record)[:2], ["schedule.kind", "schedule.stages"])
            self.assertEqual(record, {**point, **row})

    def test_with_pandas_spans_are_a_frame_of_the_columns(self):
        result = pipetwin.simulate(pipetwin.load("builtin:quickstart"))
        hide_pandas(self)
        columns = result.spans
        self.use_stand_in_pandas()
        frame = result.spans
        self.assertIsInstance(frame, StandInDataFrame)
        self.assertEqual(sorted(frame.data), sorted(columns))
        for name, column in columns.items():
            self.assertEqual(list(frame.data[name]), list(column), name)

    @unittest.skipIf(importlib.util.find_spec("pandas") is None, "pandas is not installed")
    def test_real_pandas_frames_equal_the_cli_csv_and_timeline(self):
        import pandas
        frame = pipetwin.sweep(pipetwin.load("builtin:quickstart"), vary=self.VARY)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "sweep.csv")
            code, _, err = cli("sweep", "builtin:quickstart", *self.CLI_VARY, "--csv", path)
            self.assertEqual(code, 0, err)
            csv = pandas.read_csv(path).sort_values("point")
        frame = frame.sort_values("index")
        for column in ("schedule.kind", "schedule.stages", "iteration_time_s", "status"):
            self.assertEqual([str(v) for v in frame[column]], [str(v) for v in csv[column]],
                             column)
        result = pipetwin.simulate(pipetwin.load("builtin:quickstart"))
        spans = result.spans
        self.assertIsInstance(spans, pandas.DataFrame)
        self.assertEqual(spans["end_s"].max(), result.training_time_s)
        self.assertEqual(sorted(spans["device"].unique()), [0, 1, 2, 3])


if __name__ == "__main__":
    unittest.main(verbosity=2)
