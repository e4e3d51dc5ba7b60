int other_czstd(void);
