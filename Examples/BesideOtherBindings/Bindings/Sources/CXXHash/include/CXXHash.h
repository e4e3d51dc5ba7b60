int other_cxxhash(void);
