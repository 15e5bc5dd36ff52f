"""The authoring side: commands that write catalogue files and project settings (`errkit fmt`,
`new`, `import`, `init`). Imports core, catalogue and generate."""
