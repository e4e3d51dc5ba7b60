int other_clibnotify(void);
