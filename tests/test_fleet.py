"""``cudaresolve plan``: inventories read as real tools write them, pools, groups checked pool by pool.

The fixtures under ``fixtures/fleet`` are shaped like real output: ``kubectl get nodes -o json``
with GPU Feature Discovery labels (MIG and time-slicing suffixes, the deprecated driver labels, a
node without a GPU), ``scontrol show node --oneliner`` lines, a CSV inventory and host files.
Every group the plan emits is checked here on each of its pools with the database solver, pinned
build by build, independently of the planner's own check.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from cudaresolve.cli import main
from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import load_compat
from cudaresolve.errors import InvalidInput, NoSolution
from cudaresolve.fleet.inputs import gfd_product, parse_driver_map, parse_inventory, read_inventory
from cudaresolve.fleet.plan import join_targets, make_plan
from cudaresolve.fleet.pools import make_pools
from cudaresolve.resolve.solve import solve

FLEET = Path(__file__).parent / "fixtures" / "fleet"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CUDARESOLVE_CACHE_DIR", str(tmp_path / "cache"))


def plan_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    flags = ["--python-version", "3.11", "--platform", "linux_x86_64", "--offline", "--json"]
    code = main(["plan", "torch", *argv, *flags])
    return code, json.loads(capsys.readouterr().out)


def runs_on(packages: list[dict[str, Any]], target: Any) -> bool:
    db = load_compat()
    try:
        solve(["torch", *(f"{p['name']}=={p['version']}" for p in packages)], db, target)
    except NoSolution:
        return False
    return True


def pools_of(path: Path, **kw: Any) -> dict[str, Any]:
    db = load_compat()
    hosts = read_inventory([str(path)], **kw).hosts
    return {p.id: p for p in make_pools(hosts, db, platform="linux_x86_64", python="3.11")}


# -- inputs ------------------------------------------------------------------------------------


def test_kubectl_nodes_read_from_gfd_labels() -> None:
    inventory = read_inventory([str(FLEET / "kubectl-nodes.json")])
    hosts = {h.name: h for h in inventory.hosts}
    assert inventory.skipped == 1  # system-01 has no GPU labels
    assert hosts["a100-mig-01"].gpus == ("NVIDIA A100 SXM4 80GB",)  # -MIG-1g.10gb dropped
    assert hosts["a100-mig-01"].label == "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"  # kept for placement
    assert hosts["l4-shared-01"].gpus == ("NVIDIA L4",)
    assert hosts["t4-old-01"].driver == "535.230.02"  # from the deprecated cuda.driver.* labels
    assert hosts["h100-01"].count == 8 and hosts["h100-01"].platform == "linux_x86_64"


def test_gfd_product_label_is_the_nvml_name_as_gfd_writes_it() -> None:
    assert gfd_product("NVIDIA H100 80GB HBM3") == "NVIDIA-H100-80GB-HBM3"
    assert gfd_product("NVIDIA GeForce RTX 4090 (TM)") == "NVIDIA-GeForce-RTX-4090-TM"


def test_scontrol_lines_with_a_driver_map() -> None:
    drivers = parse_driver_map((FLEET / "drivers.map").read_text(), "drivers.map")
    hosts = {h.name: h for h in read_inventory([str(FLEET / "scontrol.txt")], drivers=drivers).hosts}
    assert set(hosts) == {"gpu001", "gpu002", "gpu101", "gh001"}  # login01 has no GPU gres
    assert hosts["gpu001"].gpus == ("a100",) and hosts["gpu001"].count == 4
    assert hosts["gpu001"].driver == "570.124.06"  # glob on the node name
    assert hosts["gpu101"].driver == "535.230.02"  # glob on the gres type
    assert hosts["gh001"].platform == "linux_aarch64"
    assert hosts["gpu001"].features == ("a100", "ib")


def test_csv_host_with_two_gpu_models_is_one_pool_with_both() -> None:
    pools = pools_of(FLEET / "inventory.csv")
    mixed = next(p for p in pools.values() if len(p.gpus) == 2)
    assert [h.name for h in mixed.hosts] == ["ws-1"]
    assert {str(g.cc) for g in mixed.target.gpus} == {"8.9", "8.6"}


def test_a_grace_superchip_node_with_no_platform_is_planned_for_aarch64(tmp_path: Path) -> None:
    """Found by the fleet audit: a CSV row (or Slurm node without ``Arch=``) of GH200s was planned for the plan's
    default platform, x86_64, a lock its Grace host cannot install."""
    (tmp_path / "inv.csv").write_text("node,gpu,driver\ngh-1,NVIDIA GH200 480GB,560.35.03\nh-1,H100,560.35.03\n")
    pools = make_pools(read_inventory([str(tmp_path / "inv.csv")]).hosts, load_compat(),
                       platform="linux_x86_64", python="3.11")  # fmt: skip
    platforms = {p.hosts[0].name: p.target.platform for p in pools}
    assert platforms == {"gh-1": "linux_aarch64", "h-1": "linux_x86_64"}


def test_pools_group_equal_hosts_largest_first() -> None:
    pools = pools_of(FLEET / "kubectl-nodes.json")
    assert [len(p.hosts) for p in pools.values()] == sorted((len(p.hosts) for p in pools.values()), reverse=True)
    a100 = pools["pool-1"]
    assert {h.name for h in a100.hosts} == {"a100-01", "a100-02", "a100-mig-01"}
    assert a100.driver == "550.127.05"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("{not json", "invalid-input"),
        ('{"kind": "List", "items": 3}', "invalid-input"),
        ('{"something": "else"}', "invalid-input"),
        ("NodeName=\nfoo", "invalid-input"),
        ("name,driver\nx,550.54.15\n", "invalid-input"),
        ("[" * 100000, "invalid-input"),
    ],
)
def test_bad_inventories_are_one_coded_error(text: str, code: str) -> None:
    with pytest.raises(InvalidInput) as info:
        parse_inventory(text, "inv")
    assert info.value.code == code
    assert "\n" not in info.value.message


def test_a_fifo_is_refused_without_blocking(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "nodes.fifo"
    os.mkfifo(fifo)
    code = main(["plan", "torch", "--from", str(fifo), "--offline"])
    assert code == 1
    assert "not a regular file" in capsys.readouterr().err


def test_unknown_product_falls_back_to_the_capability_labels(tmp_path: Path) -> None:
    node = {"kind": "Node", "metadata": {"name": "n1", "labels": {
        "nvidia.com/gpu.product": "NVIDIA-Future-Part", "nvidia.com/gpu.count": "2",
        "nvidia.com/gpu.compute.major": "9", "nvidia.com/gpu.compute.minor": "0",
        "nvidia.com/cuda.driver-version.full": "570.124.06"}}}
    path = tmp_path / "n.json"
    path.write_text(json.dumps(node))
    pool = pools_of(path)["pool-1"]
    assert pool.problem is None and str(pool.target.gpus[0].cc) == "9.0"


# -- plans -------------------------------------------------------------------------------------


def test_one_lock_when_one_set_runs_on_every_pool(capsys: pytest.CaptureFixture[str]) -> None:
    code, plan = plan_json(capsys, "--from", str(FLEET / "kubectl-nodes.json"))
    assert code == 0
    assert len(plan["groups"]) == 1 and plan["blocked"] == []
    assert plan["groups"][0]["pools"] == [p["id"] for p in plan["pools"]]
    pools = pools_of(FLEET / "kubectl-nodes.json")
    for pool in pools.values():
        assert runs_on(plan["groups"][0]["packages"], pool.target), pool.id
    assert plan["arch_list"] == "7.5;8.0;8.9;9.0"
    assert {p["id"] for p in plan["pools"]} == set(pools)
    assert all({"id", "hosts", "gpus", "driver"} <= set(p) for p in plan["pools"])


def test_pascal_and_blackwell_need_two_locks(capsys: pytest.CaptureFixture[str]) -> None:
    code, plan = plan_json(capsys, "--from", str(FLEET / "kubectl-pascal-blackwell.json"))
    assert code == 0
    assert len(plan["groups"]) == 2
    pools = pools_of(FLEET / "kubectl-pascal-blackwell.json")
    for group in plan["groups"]:
        for pool_id in group["pools"]:
            assert runs_on(group["packages"], pools[pool_id].target)
        others = [p for p in pools.values() if p.id not in group["pools"]]
        assert others and not any(runs_on(group["packages"], p.target) for p in others)


def test_a_pool_whose_driver_does_not_know_its_gpu_is_blocked_with_the_lowest_upgrade(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, plan = plan_json(capsys, "--from", str(FLEET / "hosts"))
    assert code == 0
    [blocked] = plan["blocked"]
    assert blocked["reasons"][0]["code"] == "driver-unsupported-gpu"
    [way] = blocked["ways_out"]
    upgrade = parse_driver(way["spec"].removeprefix("driver>="))
    pool = pools_of(FLEET / "hosts")[blocked["pool"]]
    db = load_compat()
    group = plan["groups"][0]["packages"]
    from dataclasses import replace

    def at(driver: Any) -> Any:
        return replace(pool.target, driver=driver, cuda_driver_max=db.max_cuda_for_driver(driver, pool.platform))

    assert runs_on(group, at(upgrade))
    lower = [r.minor_compat_driver("linux_x86_64") for r in db.cuda] + [r.min_driver("linux_x86_64") for r in db.cuda]
    lower += [r.min_driver for r in db.driver_gpus if r.min_driver is not None]
    below = [d for d in lower if pool.target.driver < d < upgrade]
    assert not any(runs_on(group, at(d)) for d in below)  # the lowest driver the database names


def test_a_pool_whose_driver_is_past_its_gpus_last_branch_is_told_the_older_branch(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Found by the hardware audit: a P100 on driver 590 was told that "no driver upgrade lets it join group 1: its
    lock has no code for these GPUs", though group 1's torch carries sm_60 and runs there on an R580 driver."""
    inventory = tmp_path / "inv.csv"
    inventory.write_text("host,gpu,count,driver,platform,python\nn1,Tesla V100-SXM2-16GB,8,535.104.05,x86_64,3.11\n"
                         "n8,Tesla P100-PCIE-16GB,2,590.48.01,x86_64,3.11\n")  # fmt: skip
    code, plan = plan_json(capsys, "--from", str(inventory))
    assert code == 0
    [blocked] = plan["blocked"]
    [way] = blocked["ways_out"]
    assert way["spec"] == "driver R580" and "older than its own" in way["message"]
    target = pools_of(inventory)[blocked["pool"]].target
    db = load_compat()
    from dataclasses import replace

    driver = parse_driver(way["message"].split("(")[1].split(" ")[0])
    older = replace(target, driver=driver, cuda_driver_max=db.max_cuda_for_driver(driver, "linux_x86_64"))
    assert runs_on(plan["groups"][0]["packages"], older)


def test_a_fleet_no_one_toolkit_compiles_for_is_told_so(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Found by the hardware audit: a fleet of K80s and B300s was given TORCH_CUDA_ARCH_LIST "3.7;...;10.3" for one
    source build, which no CUDA toolkit compiles (sm_37 ended with CUDA 11.8; sm_103 begins with 12.9)."""
    inventory = tmp_path / "inv.csv"
    inventory.write_text("host,gpu,count,driver,platform,python\nn1,Tesla K80,8,470.82.01,x86_64,3.11\n"
                         "n2,NVIDIA B300,8,580.65.06,x86_64,3.11\n")  # fmt: skip
    _, plan = plan_json(capsys, "--from", str(inventory))
    db = load_compat()
    ccs = {g.cc for p in pools_of(inventory).values() for g in p.target.gpus}
    assert not any(ccs <= {a.cc for a in r.nvcc_sm} for r in db.cuda)
    assert "fleet-arch-list-split" in {w["code"] for w in plan["warnings"]}
    same = tmp_path / "same.csv"
    same.write_text("host,gpu,count,driver,platform,python\nn1,Tesla T4,8,535.104.05,x86_64,3.11\n"
                    "n2,NVIDIA H100,8,580.65.06,x86_64,3.11\n")  # fmt: skip
    _, plan = plan_json(capsys, "--from", str(same))
    assert "fleet-arch-list-split" not in {w["code"] for w in plan["warnings"]}


def test_joined_target_judges_each_gpu_against_its_own_hosts_driver() -> None:
    pools = pools_of(FLEET / "kubectl-pascal-blackwell.json")
    joined = join_targets([p.target for p in pools.values()], load_compat())
    assert joined is not None
    assert joined.driver == min(p.target.driver for p in pools.values())
    from cudaresolve.resolve.gpudriver import unsupported_gpus

    assert unsupported_gpus(load_compat(), joined) is None  # 575 drives the B200; 535 drives the P100


def test_slurm_groups_carry_a_nodelist_and_gres_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, plan = plan_json(
        capsys, "--from", str(FLEET / "scontrol.txt"), "--driver-map", str(FLEET / "drivers.map")
    )
    assert code == 0
    pools = pools_of(FLEET / "scontrol.txt", drivers=parse_driver_map((FLEET / "drivers.map").read_text(), "m"))
    arm = next(p for p in pools.values() if p.platform == "linux_aarch64")
    assert not any(arm.id in g["pools"] and len(g["pools"]) > 1 for g in plan["groups"])  # its own lock
    db = load_compat()
    made = make_plan(list(pools.values()), ["torch"], db)
    from cudaresolve.fleet.placement import node_affinity, slurm_line

    lines = [slurm_line(g) for g in made.groups]
    assert any(line and "--nodelist=gh001" in line and "--gres=gpu:gh200:1" in line for line in lines)
    for group in made.groups:  # Slurm nodes carry no Kubernetes labels: no affinity selects them
        terms = node_affinity(group)["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert terms["nodeSelectorTerms"] == []
    capsys.readouterr()
    assert main(["plan", "torch", "--from", str(FLEET / "scontrol.txt"), "--driver-map", str(FLEET / "drivers.map"),
                 "--python-version", "3.11", "--offline"]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "--nodelist=" in printed and "nodeAffinity" not in printed


def test_affinity_keeps_the_nodes_own_product_labels(capsys: pytest.CaptureFixture[str]) -> None:
    pools = pools_of(FLEET / "kubectl-nodes.json")
    made = make_plan(list(pools.values()), ["torch"], load_compat())
    from cudaresolve.fleet.placement import node_affinity

    terms = node_affinity(made.groups[0])["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    values = {v for t in terms["nodeSelectorTerms"] for e in t["matchExpressions"] for v in e["values"]}
    assert {"NVIDIA-A100-SXM4-80GB", "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb", "NVIDIA-L4-SHARED"} <= values
    assert {"550.127.05", "570.124.06", "535.230.02"} <= values


def test_output_dir_gets_one_file_per_group_and_never_overwrites_a_foreign_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "locks"
    code, plan = plan_json(capsys, "--from", str(FLEET / "kubectl-pascal-blackwell.json"), "-o", str(out))
    assert code == 0
    assert sorted(os.listdir(out)) == ["group-1.requirements.txt", "group-2.requirements.txt"]  # offline: not complete
    first = (out / "group-1.requirements.txt").read_text()
    assert "NOT A COMPLETE LOCK" in first
    for package in plan["groups"][0]["packages"]:
        assert f"{package['name']}=={package['version']}" in first
    (out / "group-2.requirements.txt").write_text("mine\n")
    code = main(["plan", "torch", "--from", str(FLEET / "kubectl-pascal-blackwell.json"), "--python-version",
                 "3.11", "--offline", "-o", str(out)])
    assert code == 1
    assert (out / "group-2.requirements.txt").read_text() == "mine\n"


def test_human_table_names_every_pool_and_fits_80_columns(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["plan", "torch", "--from", str(FLEET / "kubectl-pascal-blackwell.json"), "--python-version",
                 "3.11", "--platform", "linux_x86_64", "--offline"])
    assert code == 0
    out = capsys.readouterr().out
    for pool in ("pool-1", "pool-2", "pool-3"):
        assert pool in out
    table = out.split("\n\n")[0].splitlines()
    assert all(len(line) <= 80 for line in table)
    assert "TORCH_CUDA_ARCH_LIST" in out


def test_a_slurm_gres_count_without_a_type_is_no_gpu_name_and_is_named_in_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = "NodeName=n1 Arch=x86_64 Gres=gpu:4 State=IDLE\nNodeName=n2 Arch=x86_64 Gres=gpu:a100:8 State=IDLE\n"
    inventory = parse_inventory(lines, "inv")
    assert [(h.name, h.gpus, h.count) for h in inventory.hosts] == [("n2", ("a100",), 8)]
    assert inventory.untyped == ("n1",)
    (tmp_path / "nodes.txt").write_text(lines)
    code = main(["plan", "torch", "--from", str(tmp_path / "nodes.txt"), "--driver", "580.65.06",
                 "--python-version", "3.11", "--offline", "--json"])  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and len(out["pools"]) == 1
    (untyped,) = [w for w in out["warnings"] if w["code"] == "fleet-gres-untyped"]
    assert "n1" in untyped["message"] and "invalid-arch" not in json.dumps(out)


def test_a_csv_platform_given_as_a_bare_machine_means_linux_on_it() -> None:
    text = "host,gpu,count,driver,platform\na,A100,8,580.65.06,x86_64\nb,GH200,1,580.65.06,aarch64\n"
    assert [h.platform for h in parse_inventory(text, "inv.csv").hosts] == ["linux_x86_64", "linux_aarch64"]


def test_driver_and_driver_map_fill_in_any_host_without_a_driver(tmp_path: Path) -> None:
    (tmp_path / "inv.csv").write_text("host,gpu,count,driver\na,A100,8,\nb,H100,8,\nc,L4,1,550.54.15\n")
    inventory = read_inventory([str(tmp_path / "inv.csv")], drivers={"b": "570.86.15", "*": "580.65.06"})
    assert [(h.name, h.driver) for h in inventory.hosts] == [
        ("a", "580.65.06"), ("b", "570.86.15"), ("c", "550.54.15")]  # the inventory's own driver wins


def test_a_windows_kubectl_node_is_planned_for_windows() -> None:
    node = {"metadata": {"name": "win-01", "labels": {
        "kubernetes.io/os": "windows", "kubernetes.io/arch": "amd64", "nvidia.com/gpu.product": "NVIDIA-L4",
        "nvidia.com/gpu.count": "1", "nvidia.com/cuda.driver-version.full": "580.88"}}}  # fmt: skip
    (host,) = parse_inventory(json.dumps({"kind": "List", "items": [node]}), "nodes.json").hosts
    assert host.platform == "win_amd64"


def test_a_csv_pool_is_selected_by_compute_capability_not_by_the_users_spelling(tmp_path: Path) -> None:
    from cudaresolve.fleet.placement import node_affinity

    (tmp_path / "inv.csv").write_text("host,gpu,count,driver\na,H100,8,580.65.06\n")
    pools = make_pools(read_inventory([str(tmp_path / "inv.csv")]).hosts, load_compat(),
                       platform="linux_x86_64", python="3.11")  # fmt: skip
    made = make_plan(pools, ["torch"], load_compat())
    (term,) = node_affinity(made.groups[0])["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"]
    assert term["matchExpressions"] == [
        {"key": "nvidia.com/gpu.compute.major", "operator": "In", "values": ["9"]},
        {"key": "nvidia.com/gpu.compute.minor", "operator": "In", "values": ["0"]},
        {"key": "nvidia.com/cuda.driver-version.full", "operator": "In", "values": ["580.65.06"]},
    ]  # no gpu.product "H100": GFD labels the node NVIDIA-H100-80GB-HBM3 or the like


def test_a_plan_written_into_its_own_inventory_folder_is_not_read_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "inv.csv").write_text("host,gpu,count,driver\na,A100,8,580.65.06\n")
    argv = ["plan", "torch", "--from", str(tmp_path), "--python-version", "3.11", "--offline", "-o", str(tmp_path)]
    assert main(argv) == 0 and (tmp_path / "group-1.requirements.txt").exists()
    capsys.readouterr()
    assert main(argv) == 0  # its own group-1 lock is in the folder now: passed over, not read as a CSV
    assert "invalid-input" not in capsys.readouterr().err


def test_a_plan_writes_no_group_lock_when_one_would_overwrite_a_users_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "inv.csv").write_text("host,gpu,count,driver,python\na,A100,8,580.65.06,3.11\nb,T4,1,535.104.05,3.12\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "group-2.requirements.txt").write_text("mine\n")  # the user's, where group 2's lock would go
    code = main(["plan", "torch", "--from", str(tmp_path / "inv.csv"), "--offline", "-o", str(out)])
    assert code == 1 and "not generated by cudaresolve" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["group-2.requirements.txt"]  # group 1's was not written either


@pytest.mark.parametrize(("header", "field"), [
    ("host,gpu,gpu,driver", "gpu"), ("host,gpu,model,driver", "gpu"), ("node,hostname,gpu", "host"),
    ("host,gpu,driver,driver_version", "driver"),
])
def test_a_csv_header_that_names_one_field_twice_is_refused(header: str, field: str) -> None:
    """Found by the adversarial hunt: 'host,gpu,gpu' with 'h1,A100,V100' planned h1 as an A100 host alone, the
    second column dropped without a word. Which of two columns holds a field is not guessed."""
    text = f"{header}\n" + ",".join(f"v{i}" for i in range(header.count(",") + 1)).replace("v1", "A100") + "\n"
    with pytest.raises(InvalidInput) as caught:
        parse_inventory(text, "inv.csv")
    assert f"names the {field} column more than once" in caught.value.message


def test_a_fleet_of_more_distinct_pools_than_a_plan_solves_is_refused_at_once(tmp_path: Path) -> None:
    """Found by the adversarial hunt: 20,000 hosts, each on its own driver (560 KB of CSV), ran past 90 s, one
    solve per pool. A plan takes at most 1,000 pools; the hosts are matched first, nothing solved."""
    rows = "".join(f"h{i},A100,8,535.{i % 1000}.{i // 1000}\n" for i in range(1001))
    (tmp_path / "inv.csv").write_text("host,gpu,count,driver\n" + rows)
    with pytest.raises(InvalidInput) as caught:
        pools_of(tmp_path / "inv.csv")
    assert "1001 distinct pools" in caught.value.message


INVENTORY = """host,gpu,count,driver,platform,python
gpu-a1,NVIDIA H100 80GB HBM3,8,580.65.06,linux_x86_64,3.12
gpu-b1,Tesla V100-SXM2-32GB,8,580.95.05,linux_x86_64,3.12
gpu-c1,NVIDIA GeForce RTX 5090,2,575.57.08,linux_x86_64,3.12
gpu-d1,NVIDIA GH200 480GB,1,580.65.06,aarch64,3.12
gpu-e1,NVIDIA A10G,4,535.104.05,linux_x86_64,3.12
gpu-f1,Tesla T4,1,470.256.02,linux_x86_64,3.12
"""


@pytest.mark.parametrize("request_", [["torch"], ["torch", "xformers"]])
def test_a_driver_is_offered_only_where_it_makes_group_1s_set_run(tmp_path: Path, request_: list[str]) -> None:
    """Found by this stop's hardware audit: a T4 pool that ran group 1's set at its own driver was told a newer
    driver would let it join, and a GH200 (aarch64) pool was told 590.44.01 would join it to an x86_64 group."""
    from dataclasses import replace

    from cudaresolve.fleet.plan import _Solver, make_plan

    inventory = tmp_path / "inventory.csv"
    inventory.write_text(INVENTORY)
    db = load_compat()
    made = make_plan(list(pools_of(inventory).values()), request_, db)
    main_group = made.groups[0]
    first = main_group.pools[0].target
    assert first is not None
    solver = _Solver(request_, db)
    for item in (*made.blocked, *made.upgrades):
        target = item.pool.target
        assert target is not None
        apart = (target.platform, target.python) != (first.platform, first.python)
        if apart:
            assert item.upgrade is None
        if item.upgrade is not None:
            assert not solver.runs_on(main_group.solution, target)  # it does not run already
            moved = replace(
                target, driver=item.upgrade, cuda_driver_max=db.max_cuda_for_driver(item.upgrade, target.platform)
            )
            assert solver.runs_on(main_group.solution, moved)
    arm = [b for b in made.blocked if b.pool.target is not None and b.pool.target.platform == "linux_aarch64"]
    assert all(b.apart and b.upgrade is None for b in arm)


@pytest.mark.parametrize(("text", "key"), [
    ("host,gpu\n" + "a,b\n" * 1_000_001, "fleet.input.too-many-lines"),
    ('{"kind": "List", "items": [' + "[]," * 2_000_001 + "[]]}", "fleet.input.too-many-values"),
])  # fmt: skip
def test_an_inventory_of_tiny_rows_is_refused_before_its_rows_are_made(text: str, key: str) -> None:
    """Found by this stop's hostile-input hunt: a 250 MB inventory of tiny rows (under the byte bound) was made
    into Python objects before the host count was checked: 3 GB, then a MemoryError."""
    with pytest.raises(InvalidInput) as refused:
        parse_inventory(text, "inv")
    assert dict(refused.value.text.fields)["reason"].key == key  # type: ignore[union-attr]


def test_an_inventorys_control_characters_reach_no_terminal(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Found by the hostile-input audit: a GPU or host name from an inventory went into the pools table and the
    placement lines with its escape sequences; every cell now shows them escaped."""
    inventory = tmp_path / "inv.csv"
    inventory.write_text("host,gpu,count,driver,platform,python\nn1,Tesla T4\x1b[31m,8,535.104.05,x86_64,3.11\n"
                         "n\x1b]0;x\x07,NVIDIA H100,8,580.65.06,x86_64,3.11\n")  # fmt: skip
    assert main(["plan", "torch", "--from", str(inventory), "--offline"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "Tesla T4\\x1b[31m" in out


def test_a_vgpu_nodes_gfd_label_is_its_board(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A VM's vGPU type reaches GFD's label with its spaces as dashes (``GRID A100-40C`` -> ``GRID-A100-40C``); read
    back with spaces, it is still its board's GPU, also for a MIG-backed type (``NVIDIA-A100-4-20C``)."""
    nodes = [
        {"kind": "Node", "metadata": {"name": f"vm{i}", "labels": {
            "nvidia.com/gpu.product": product, "nvidia.com/gpu.count": "1",
            "nvidia.com/cuda.driver-version.full": "580.65.06"}}}
        for i, product in enumerate((gfd_product("GRID A100-40C"), gfd_product("NVIDIA A100-4-20C")))
    ]
    (tmp_path / "nodes.json").write_text(json.dumps({"kind": "List", "items": nodes}))
    code, out = plan_json(capsys, "--from", str(tmp_path / "nodes.json"))
    assert code == 0, out
    assert out["blocked"] == []
    assert [p["gpus"] for p in out["pools"]] == [["NVIDIA A100"]]


def test_a_complete_group_lock_gets_a_pep_751_name(tmp_path: Path) -> None:
    """A group whose lock is complete was written as group-N.pylock.toml, a name the PEP 751 check refuses: every
    online ``plan -o DIR`` with a whole lock failed with 'must be named pylock.toml or pylock.NAME.toml'."""
    import tomllib

    from cudaresolve.fleet.plan import Group, Plan
    from cudaresolve.fleet.run import _write_groups
    from cudaresolve.resolve.model import LockedPackage, Solution
    from cudaresolve.target.model import Target

    wheel = "torch-2.15.0+cpu-cp311-cp311-linux_x86_64.whl"
    package = LockedPackage(name="torch", version="2.15.0+cpu", index="https://download.pytorch.org/whl/cpu",
                            url=f"https://download.pytorch.org/whl/cpu/{wheel}", filename=wheel, sha256="ab" * 32)
    solution = Solution(target=Target(python="3.11", platform="linux_x86_64"), variant="cpu",
                        index_url="https://download.pytorch.org/whl/cpu", packages=(package,), complete=True)
    plan = Plan(pools=(), groups=(Group(number=1, pools=(), solution=solution),), blocked=(), upgrades=(),
                arch_list="")
    written = _write_groups(plan, str(tmp_path / "locks"))
    assert [os.path.basename(p) for p in written] == ["pylock.group-1.toml"]
    assert tomllib.loads(Path(written[0]).read_text())["packages"][0]["name"] == "torch"


def test_plan_reads_the_indexes_lock_reads_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """plan's group locks ignored the user's default index (PIP_INDEX_URL, pip.conf, [tool.cudaresolve] index-url)
    and the project's index-mirror: they went to pypi.org and download.pytorch.org whatever the user named. Served
    here on 127.0.0.1 only, the lock is whole and names the mirrors that served it."""
    from local_index import LocalIndex

    db = load_compat()
    version = next(f"{r.version}+cpu" for r in db.packages("torch")
                   if "3.11" in r.python and any(b.variant == "cpu" for b in r.builds))
    index = LocalIndex(tmp_path / "index")
    index.add("whl/cpu", "torch", version, tag="cp311-cp311-linux_x86_64", requires=["filelock"])
    index.add("pypi", "filelock", "3.16.1")
    host = tmp_path / "cpu.json"
    host.write_text('{"target": {"gpus": [], "driver": null, "platform": "linux_x86_64", "python": "3.11"}}')
    with index.serve() as base:
        (tmp_path / "pyproject.toml").write_text(f'[tool.cudaresolve]\nindex-mirror = "{base}/whl"\n')
        monkeypatch.setenv("PIP_INDEX_URL", f"{base}/pypi/simple")
        code = main(["plan", "torch", "--from", str(host), "--python-version", "3.11", "--platform", "linux_x86_64",
                     "-o", str(tmp_path / "locks"), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0, out
    assert out["groups"][0]["complete"] is True
    import tomllib

    locked = tomllib.loads((tmp_path / "locks" / "pylock.group-1.toml").read_text())["packages"]
    assert {p["name"] for p in locked} == {"torch", "filelock"}
    assert all(p["index"].startswith(base) and p["wheels"][0]["url"].startswith(base) for p in locked)


def test_scontrol_show_nodes_default_form_is_read_as_its_oneliner(tmp_path: Path) -> None:
    """``scontrol show node`` without ``--oneliner`` writes each node over several indented lines: they are
    that node's fields, the same as its one line (the fixture's nodes, re-wrapped as scontrol wraps them)."""
    oneliner = (FLEET / "scontrol.txt").read_text()
    wrapped = "\n\n".join(
        "\n   ".join(" ".join(words[i : i + 3]) for i in range(0, len(words), 3))
        for words in (line.split() for line in oneliner.splitlines() if line.strip())
    )
    assert "\n   " in wrapped and "\n\nNodeName=gpu002" in wrapped
    drivers = parse_driver_map((FLEET / "drivers.map").read_text(), "drivers.map")
    flat = read_inventory([str(FLEET / "scontrol.txt")], drivers=drivers)
    (tmp_path / "nodes.txt").write_text(wrapped + "\n")
    assert read_inventory([str(tmp_path / "nodes.txt")], drivers=drivers) == flat
    with pytest.raises(InvalidInput) as caught:  # an unindented line without NodeName= is still refused
        parse_inventory("NodeName=a Gres=gpu:a100:8\nState=IDLE\n", "nodes.txt")
    assert caught.value.code == "invalid-input" and "line 2 has no NodeName=" in caught.value.message


def test_a_node_read_twice_is_planned_once_and_a_name_given_twice_is_warned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file given twice, or an old copy of it in the same folder, names each node twice: an exact repeat is one
    node (the host counts are the fleet's), and every repeated name is said, as is one described two ways."""
    nodes = str(FLEET / "kubectl-nodes.json")
    once = read_inventory([nodes])
    twice = read_inventory([nodes, nodes])
    assert twice.hosts == once.hosts and set(twice.repeated) == {h.name for h in once.hosts}
    assert once.repeated == ()
    _, alone = plan_json(capsys, "--from", nodes)
    _, doubled = plan_json(capsys, "--from", nodes, "--from", nodes)
    assert [p["hosts"] for p in doubled["pools"]] == [p["hosts"] for p in alone["pools"]]
    (warned,) = [w for w in doubled["warnings"] if w["code"] == "fleet-node-repeated"]
    assert once.hosts[0].name in warned["message"]
    rows = "host,gpu,count,driver\na,A100,8,550.54.15\na,A100,8,580.65.06\nb,L4,1,550.54.15\n"
    (tmp_path / "inv.csv").write_text(rows)
    differing = read_inventory([str(tmp_path / "inv.csv")])
    assert [h.driver for h in differing.hosts if h.name == "a"] == ["550.54.15", "580.65.06"]
    assert differing.repeated == ("a",)


@pytest.mark.parametrize("gpu", [{"name": 5}, {"cc": 8.6}, {"memory_mib": 81559}, {"name": " ", "cc": None}])
def test_a_host_files_gpu_without_a_name_or_capability_is_refused_not_planned_as_no_gpu(
    gpu: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A GPU the host file lists but does not name would be left out, and a host whose only GPU it is planned on
    the CPU build: refused, in one line naming the file and the GPU."""
    host = {"schema": 1, "target": {"gpus": [{"name": "NVIDIA H100 80GB HBM3", "cc": "9.0"}, gpu],
                                    "driver": "550.54.15", "platform": "linux_x86_64", "python": "3.11"}}  # fmt: skip
    with pytest.raises(InvalidInput) as caught:
        parse_inventory(json.dumps(host), "h.json")
    assert "GPU 2 of the host file" in caught.value.message
    host["target"]["gpus"] = [gpu]  # type: ignore[index]
    (tmp_path / "h.json").write_text(json.dumps(host))
    assert main(["plan", "torch", "--from", str(tmp_path / "h.json"), "--offline"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "invalid-input" in captured.err and len(captured.err.strip().splitlines()) == 1
    named = {"name": None, "cc": "9.0"}  # a capability alone names it; no GPUs at all is a host without one
    assert parse_inventory(json.dumps({"target": {"gpus": [named]}}), "h.json").hosts[0].gpus == ("9.0",)
    assert parse_inventory(json.dumps({"target": {"gpus": []}}), "h.json").hosts[0].gpus == ()


def test_a_pool_with_a_lock_of_its_own_and_no_driver_to_join_is_told_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Volta on R470 (CUDA 11 at most) and Blackwell (CUDA 12.8 at least) need two locks, and an aarch64 node a
    third: each pool outside group 1 that no driver brings in says why, in the solver's words or by its platform."""
    rows = ("host,gpu,count,driver,platform\nv1,Tesla V100-SXM2-16GB,8,470.256.02,x86_64\n"
            "v2,Tesla V100-SXM2-16GB,8,470.256.02,x86_64\nb1,RTX 5090,1,575.57.08,x86_64\n"
            "g1,NVIDIA GH200 480GB,1,575.57.08,aarch64\n")  # fmt: skip
    (tmp_path / "inv.csv").write_text(rows)
    code, plan = plan_json(capsys, "--from", str(tmp_path / "inv.csv"))
    assert code == 0 and len(plan["groups"]) == 3
    own = {u["pool"]: u for u in plan["upgrades"]}
    pools = {p["id"]: p for p in plan["pools"]}
    (blackwell,) = [i for i, p in pools.items() if "NVIDIA GeForce RTX 5090" in p["gpus"]]
    (grace,) = [i for i, p in pools.items() if p["platform"] == "linux_aarch64"]
    assert own[blackwell]["ways_out"] == [] and own[grace]["ways_out"] == []
    assert [r["code"] for r in own[blackwell]["reasons"]] == ["sm-not-covered"]
    assert "sm_120" in own[blackwell]["reasons"][0]["message"]
    assert own[grace]["reasons"] == []
    flags = ["--python-version", "3.11", "--platform", "linux_x86_64", "--offline"]
    assert main(["plan", "torch", "--from", str(tmp_path / "inv.csv"), *flags]) == 0
    out = capsys.readouterr().out
    assert f"{blackwell} has a lock of its own: group 1's lock does not run on it" in out
    assert "sm-not-covered" in out and f"no driver lets {grace} join group 1: its platform or Python" in out
