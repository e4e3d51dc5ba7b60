int other_csdl2image(void);
