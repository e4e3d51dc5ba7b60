// The merge and the conflict policies are network-free (StasisMerge, which the demo game uses
// alone); a game that syncs gets them with `import StasisCloud`.
@_exported import StasisMerge
