"""openoperator/Dockerfile, read as Docker reads it (no Docker daemon runs on these machines, so the
image itself is not built here): what §5 and §20 require of the layers it adds."""

from __future__ import annotations

from conftest import OPENOPERATOR, REPO


def instructions() -> list[tuple[str, str]]:
    text = (OPENOPERATOR / "Dockerfile").read_text()
    joined = text.replace("\\\n", " ")
    out = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            op, _, rest = line.partition(" ")
            out.append((op.upper(), rest.strip()))
    return out


def test_the_openoperator_image_adds_no_port_runs_as_1000_and_keeps_opt_venv_a0_untouched():
    ins = instructions()
    froms = [rest for op, rest in ins if op == "FROM"]
    assert froms[-1] == "${OPENOPERATOR_IMAGE}", froms
    final = ins[max(i for i, (op, _) in enumerate(ins) if op == "FROM"):]
    assert not [r for op, r in ins if op == "EXPOSE"], "no new EXPOSE"
    users = [r for op, r in final if op == "USER"]
    assert users and users[-1] == "1000", users
    body = " ".join(r for _, r in final)
    assert "/opt/venv-a0" not in body, "nothing touches Agent Zero's own venv"
    # Argus from the vendored wheel, into its own venv; the wheel is in the repository.
    copies = [r.split() for op, r in final if op == "COPY"]
    wheels = [src for c in copies for src in c[:-1] if src.endswith(".whl")]
    for wheel in wheels:
        assert (REPO / wheel).is_file(), wheel
    assert "vendor/argus-skill/argus_skill-0.1.2-py3-none-any.whl" in wheels
    assert "python3 -m venv /opt/venv-argus" in body and "/opt/venv-argus/bin/pip install" in body
    # Foreman pinned (the vendored wheel and its lock, both in the repository) in its own venv,
    # with the gate the supervisor runs on it.
    assert "vendor/foreman/foreman_core-0.5.1-py3-none-any.whl" in wheels
    assert (REPO / "vendor/foreman/requirements-py312.lock").is_file()
    # ... installed by the same script scripts/test.sh runs for the tests (its wheel digest checked).
    assert "scripts/install-foreman.sh" in [src for c in copies for src in c[:-1]]
    assert ("sh /tmp/foreman/install-foreman.sh /opt/venv-foreman python3 /tmp/foreman "
            "/opt/venv-foreman-gate/foreman_gate.py") in body
    assert "install-foreman.sh" in (REPO / "scripts/test.sh").read_text()
    assert ["adapters/foreman_gate.py", "/opt/venv-foreman-gate/foreman_gate.py"] in copies
    env = " ".join(r for op, r in final if op == "ENV")
    assert "ARGUS_SUPERVISOR_FOREMAN_BIN=/opt/venv-foreman/bin/argus-foreman-gate" in env
    # State only under /a0/usr; the plugin where Agent Zero finds user plugins; no secret baked in.
    env = " ".join(r for op, r in final if op == "ENV")
    assert "ARGUS_SUPERVISOR_HOME=/a0/usr/argus-supervisor" in env
    assert "TOKEN" not in env and "OPENTRAINING" not in env
    # The plugin outside /a0/usr (a volume there cannot hide it), installed at start by the upgrade
    # plugin in Agent Zero's own plugins (test_upgrade.py runs that on a volume with an old copy).
    assert ["openoperator/plugins/argus_supervisor", "/opt/argus-supervisor/plugin"] in copies
    assert ["openoperator/plugins/_argus_supervisor_upgrade", "/a0/plugins/_argus_supervisor_upgrade"] in copies
    assert not [c for c in copies if c[-1].startswith("/a0/usr")], copies
    assert "ARGUS_SUPERVISOR_PLUGIN_IMAGE_COPY=/opt/argus-supervisor/plugin" in env
    # The plugin directory is what is installed: it carries the profile, and no tests.
    plugin = REPO / "openoperator/plugins/argus_supervisor"
    assert (plugin / "agents/argus-supervisor/agent.yaml").is_file()
    assert not (plugin / "tests").exists()
    for src, *_ in copies:
        if not src.startswith("--from"):
            assert (REPO / src).exists(), src
