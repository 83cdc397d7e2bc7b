"""bin/lib/python-env.sh: the environment built in a temporary directory and renamed into place has scripts that
run from their final place."""

import os
import subprocess

ENV_SH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bin", "lib", "python-env.sh")


def test_scripts_are_rewritten_to_name_the_final_directory(tmp_path):
    tmp, final = tmp_path / ".venv-abc.XYZ", tmp_path / "venv-abc"
    (tmp / "bin").mkdir(parents=True)
    (tmp / "bin" / "pytest").write_text("#!%s/bin/python\nimport pytest\n" % tmp)
    (tmp / "bin" / "activate").write_text("VIRTUAL_ENV=\"%s\"\nPATH=\"%s/bin:$PATH\"\n" % (tmp, tmp))
    interpreter = b"\x7fELF\0" + str(tmp).encode()
    (tmp / "bin" / "python3").write_bytes(interpreter)
    (tmp / "bin" / "python").symlink_to("python3")
    subprocess.run(["bash", "-c", 'source "$0"; depot_rename_scripts "$1" "$2"', ENV_SH, str(tmp), str(final)],
                   check=True)
    assert (tmp / "bin" / "pytest").read_text() == "#!%s/bin/python\nimport pytest\n" % final
    assert (tmp / "bin" / "activate").read_text() == "VIRTUAL_ENV=\"%s\"\nPATH=\"%s/bin:$PATH\"\n" % (final, final)
    assert (tmp / "bin" / "python3").read_bytes() == interpreter
    assert (tmp / "bin" / "python").is_symlink()
