"""The floor of this stack: a click command that parses the same options as
`tuneadvise occupancy` and prints one JSON line, and nothing else."""

import json

import click


@click.command()
@click.option("--arch")
@click.option("--registers")
@click.option("--block-size")
@click.option("--format", "fmt")
def main(arch, registers, block_size, fmt):
    print(json.dumps({"arch": arch, "registers": registers, "block_size": block_size}))


if __name__ == "__main__":
    main()
